public import Core
public import Foundation
public import Tokens

/// The part of a ``ResolutionStore`` that holds devices and the tokens that resolve to them.
public protocol DeviceStore: AnyObject {
  func device(_ id: DeviceID) throws -> DeviceRecord?
  /// Inserts or replaces the device.
  func saveDevice(_ device: DeviceRecord) throws
  func removeDevice(_ id: DeviceID) throws
  /// Up to `limit` devices whose last report was before `time`, the longest silent first.
  func silentDevices(before time: Date, limit: Int) throws -> [DeviceID]

  /// Makes `token` resolve to `device` until `until`.
  func bind(_ token: Token, to device: DeviceID, until: Date) throws
  /// The device `token` resolved to at `time`, if its binding had not run out.
  func device(heard token: Token, at time: Date) throws -> DeviceID?
  /// When `token`'s binding runs out, if it is bound.
  func binding(of token: Token) throws -> Date?
  func unbind(_ token: Token) throws
}
