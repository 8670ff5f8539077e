/// The request rates the server allows: per API key, per device, per client address, and of
/// refused keys per address (see ``ResolverServerConfiguration``). Each instance allows its
/// share, given by the instances the database knows (``setInstances(_:)``).
struct RequestLimits: Sendable {
  let perKey: RateLimiter
  let perDevice: RateLimiter
  let perAddress: RateLimiter
  let refusedKeysPerAddress: RateLimiter

  init(configuration: ResolverServerConfiguration) {
    let clock = configuration.clock
    perKey = RateLimiter(
      rate: configuration.requestsPerSecond, burst: configuration.burst, clock: clock)
    perDevice = RateLimiter(
      rate: configuration.requestsPerSecondPerDevice, burst: configuration.burstPerDevice,
      clock: clock)
    perAddress = RateLimiter(
      rate: configuration.requestsPerSecondPerAddress, burst: configuration.burstPerAddress,
      clock: clock)
    refusedKeysPerAddress = RateLimiter(
      rate: configuration.refusedKeysPerSecondPerAddress,
      burst: configuration.refusedKeyBurstPerAddress, clock: clock)
  }

  /// Divides every rate by `count` instances.
  func setInstances(_ count: Int) {
    for limiter in [perKey, perDevice, perAddress, refusedKeysPerAddress] {
      limiter.setInstances(count)
    }
  }
}
