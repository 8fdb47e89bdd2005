import PNBenchKit

PNBench.main()
