import Core
import Foundation

/// The phones a `nearby --web` box resolves for: devices of its peer resolver registered
/// through the front, each with its secret, when it was last heard from, and a token bucket
/// for its requests. A value: the front decides with it, on instants it is given.
struct WebPhones {
  struct Phone {
    var credentials: DeviceCredentials
    var lastSeen: ContinuousClock.Instant
    var tokens: Double
    var refilled: ContinuousClock.Instant
  }

  /// The most phones at once: each costs the engine its handles and its exchanges.
  static let maximum = 32
  /// A phone that has not reported for this long is unregistered (a tab closed without its
  /// goodbye): it reports at least at each token rotation, every 2 minutes.
  static let silence: Duration = .seconds(300)
  /// Requests a second a phone may make on average, and in a burst.
  static let rate = 10.0
  static let burst = 40.0

  private(set) var phones: [DeviceID: Phone] = [:]

  mutating func add(_ credentials: DeviceCredentials, at now: ContinuousClock.Instant) {
    phones[credentials.id] = Phone(
      credentials: credentials, lastSeen: now, tokens: Self.burst, refilled: now)
  }

  mutating func remove(_ id: DeviceID) { phones[id] = nil }

  /// Whether `secret` is the phone's (compared in constant time).
  func authenticate(_ id: DeviceID, secret: String?) -> DeviceCredentials? {
    guard let phone = phones[id], let secret,
      WebInvitation.equal(phone.credentials.secret, secret)
    else { return nil }
    return phone.credentials
  }

  /// Takes one request from the phone's bucket: false when it is empty.
  mutating func take(_ id: DeviceID, at now: ContinuousClock.Instant) -> Bool {
    guard var phone = phones[id] else { return false }
    let elapsed = (now - phone.refilled).seconds
    phone.tokens = min(Self.burst, phone.tokens + elapsed * Self.rate)
    phone.refilled = now
    phone.lastSeen = now
    guard phone.tokens >= 1 else {
      phones[id] = phone
      return false
    }
    phone.tokens -= 1
    phones[id] = phone
    return true
  }

  /// The phones silent for longer than ``silence`` (the caller makes them leave).
  func silent(at now: ContinuousClock.Instant) -> [DeviceCredentials] {
    phones.values.filter { now - $0.lastSeen > Self.silence }.map(\.credentials)
  }
}
