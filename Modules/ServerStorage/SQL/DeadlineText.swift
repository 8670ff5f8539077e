import Core
import Resolution
import Strategy
import Tokens

/// How a deadline's kind is kept: a kind name and its subject, as text.
enum DeadlineText {
  static func encode(_ kind: DeadlineKind) -> (String, String) {
    switch kind {
    case .proximity(let key): ("proximity", "\(key.hearer) \(key.heard) \(key.medium)")
    case .publicationExpiry(let id): ("publication", id.description)
    case .subscriptionExpiry(let id): ("subscription", id.description)
    case .tokenRetirement(let token): ("token", token.hex)
    }
  }

  static func decode(kind: String, subject: String) throws -> DeadlineKind {
    switch kind {
    case "proximity":
      let parts = subject.split(separator: " ")
      guard parts.count == 3, let hearer = DeviceID(String(parts[0])),
        let heard = DeviceID(String(parts[1])), let medium = UInt32(parts[2])
      else { throw SQLStorageError.unexpectedValue("proximity deadline \(subject)") }
      return .proximity(
        ProximityKey(hearer: hearer, heard: heard, medium: DiscoveryMediums(rawValue: medium)))
    case "publication": return .publicationExpiry(try identifier(subject))
    case "subscription": return .subscriptionExpiry(try identifier(subject))
    case "token":
      do { return .tokenRetirement(try Token(hex: subject)) } catch {
        throw SQLStorageError.unexpectedValue("token deadline \(subject)")
      }
    default: throw SQLStorageError.unexpectedValue("deadline kind \(kind)")
    }
  }
}
