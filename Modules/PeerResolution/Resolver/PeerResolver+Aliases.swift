@_spi(Resolver) public import Core
public import Foundation
public import Tokens

extension PeerResolver {
  /// Makes `token` resolve to the local device `device` until `until`, beside the token this
  /// resolver assigns it: for a local device that stands for a device whose tokens another
  /// resolver assigns (nearby-server's peer bridge mirrors each of the server's devices so).
  /// Peers asking for `token` are answered as for the device's own, with what is left of
  /// `until`; a local device reporting a sighting of it is not asked about on the network.
  /// - Throws: ``Core/ResolverError/unknownDevice(_:)`` when `device` is not a local device.
  @_spi(Resolver) public func bindAlias(_ token: Token, to device: DeviceCredentials, until: Date)
    throws
  {
    guard locals[device.id] != nil else { throw ResolverError.unknownDevice(device.id) }
    engine.store.devices.bind(token, to: device.id, until: until)
    // A local device heard it before it was bound: its question, looped back over multicast,
    // would be answered here, by this resolver, about its own device.
    exchange.forget(token: token)
  }

  /// Stops `token` resolving, when it is bound to a local device (an alias that ran out).
  @_spi(Resolver) public func unbindAlias(_ token: Token) {
    guard let holder = engine.store.devices.device(heard: token, at: .distantPast),
      locals[holder] != nil
    else { return }
    engine.store.devices.unbind(token)
  }
}
