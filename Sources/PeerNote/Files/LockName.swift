#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import Crypto

/// Names lock files by a hash of the locked document's path.
enum LockName {
    static func hash(_ path: String) -> String {
        Hex.string(SHA256.hash(data: Array(path.utf8)).prefix(12))
    }
}
