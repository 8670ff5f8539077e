public import Core
public import Foundation
public import Tokens

/// The devices and token bindings of an ``InMemoryResolutionStore``.
///
/// Not thread-safe: it belongs to its store, which belongs to one engine.
public final class InMemoryDeviceStore: DeviceStore {
  private(set) var devices: [DeviceID: DeviceRecord] = [:]
  private(set) var tokens: [Token: (device: DeviceID, until: Date)] = [:]

  init() {}

  public func device(_ id: DeviceID) -> DeviceRecord? { devices[id] }
  public func saveDevice(_ device: DeviceRecord) { devices[device.id] = device }
  public func removeDevice(_ id: DeviceID) { devices[id] = nil }

  // MARK: Tokens

  public func bind(_ token: Token, to device: DeviceID, until: Date) {
    tokens[token] = (device, until)
  }
  public func silentDevices(before time: Date, limit: Int) -> [DeviceID] {
    // A scan: the in-process store holds one app's devices.
    devices.values.filter { $0.lastReportAt < time }.sorted { $0.lastReportAt < $1.lastReportAt }
      .prefix(max(limit, 0)).map(\.id)
  }

  public func device(heard token: Token, at time: Date) -> DeviceID? {
    guard let binding = tokens[token], binding.until > time else { return nil }
    return binding.device
  }

  public func binding(of token: Token) -> Date? { tokens[token]?.until }
  public func unbind(_ token: Token) { tokens[token] = nil }
}
