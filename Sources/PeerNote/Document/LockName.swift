import Foundation

import Crypto

/// Names lock files by a hash of the locked document's path.
enum LockName {
    static func hash(_ path: String) -> String {
        SHA256.hash(data: Array(path.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
    }
}
