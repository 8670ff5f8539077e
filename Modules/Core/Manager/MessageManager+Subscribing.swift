extension MessageManager {
  /// Subscribes to nearby messages until the returned subscription is cancelled, released, or
  /// expires, calling `onFound` for each message found. `onFound` runs on this actor, in
  /// event order; return quickly. `configure` runs on the caller's executor before anything
  /// is sent.
  ///
  /// The natural trailing-closure calls do what they say:
  /// `subscribe { message in … }` passes `onFound`, and
  /// `subscribe(onFound: { … }) { params in … }` passes `configure`.
  ///
  /// - Parameters:
  ///   - onFound: called with each message found.
  ///   - configure: sets the ``SubscriptionParams`` (strategy, namespace, type, ...).
  /// - Throws: ``MessageError`` for a bad namespace or type filter, `StrategyError`,
  ///   ``ManagerError``, or the resolver's error.
  public nonisolated(nonsending) func subscribe(
    onFound: @escaping @Sendable (Message) -> Void,
    configure: (inout SubscriptionParams) throws -> Void = { _ in }
  ) async throws -> Subscription {
    var params = SubscriptionParams()
    try configure(&params)
    return try await subscribe(params: params, onFound: onFound, onLost: nil)
  }

  /// Subscribes to nearby messages, calling `onFound` and `onLost` as messages come and go;
  /// see ``subscribe(onFound:configure:)``. A trailing closure after `onLost:` is
  /// `configure`.
  ///
  /// - Throws: as ``subscribe(onFound:configure:)``.
  public nonisolated(nonsending) func subscribe(
    onFound: (@Sendable (Message) -> Void)? = nil,
    onLost: (@Sendable (Message) -> Void)?,
    configure: (inout SubscriptionParams) throws -> Void = { _ in }
  ) async throws -> Subscription {
    var params = SubscriptionParams()
    try configure(&params)
    return try await subscribe(params: params, onFound: onFound, onLost: onLost)
  }

  /// Subscribes to nearby messages without handlers: read ``Subscription/events``.
  /// `configure` runs on the caller's executor before anything is sent; label it
  /// (`subscribe(configure: { … })`): an unlabeled trailing closure is `onFound`.
  ///
  /// - Throws: as ``subscribe(onFound:configure:)``.
  public nonisolated(nonsending) func subscribe(
    configure: (inout SubscriptionParams) throws -> Void = { _ in }
  ) async throws -> Subscription {
    var params = SubscriptionParams()
    try configure(&params)
    return try await subscribe(params: params, onFound: nil, onLost: nil)
  }

  /// Subscribes with `params`; see ``subscribe(onFound:configure:)``. Runs on this actor.
  ///
  /// - Throws: as ``subscribe(onFound:configure:)``.
  public func subscribe(
    params: SubscriptionParams,
    onFound: (@Sendable (Message) -> Void)? = nil,
    onLost: (@Sendable (Message) -> Void)? = nil
  ) async throws -> Subscription {
    guard !isShutDown else { throw ManagerError.shutDown }
    try params.strategy.validate()
    try Message.validate(namespace: params.namespace)
    if let type = params.type { try Message.validate(type: type) }
    let wantsBeacons = params.deviceTypes.contains(.bleBeacons)
    let wantsDevices = params.deviceTypes.contains(.nearbyDevices)
    guard wantsBeacons || wantsDevices else { throw ManagerError.noDeviceTypes }
    if wantsBeacons, !slots.contains(where: { $0.medium.capabilities.contains(.beacons) }) {
      throw ManagerError.unsupported(
        "beacon subscriptions need a medium that scans for beacons; this manager has "
          + (slots.isEmpty ? "none" : slots.map(\.medium.name).joined(separator: ", "))
          + " (add .bluez() to the configuration's mediums)")
    }
    if !params.beaconStrategy.includeIBeacons,
      params.beaconFilters.contains(where: { if case .iBeacon = $0 { true } else { false } })
    {
      throw ManagerError.invalidConfiguration(
        "an iBeacon filter with beaconStrategy.includeIBeacons false would match nothing")
    }
    guard params.eventBufferSize > 0 else {
      throw ManagerError.invalidEventBufferSize(params.eventBufferSize)
    }
    let spec = SubscriptionSpec(
      id: .random(), namespace: params.namespace, type: params.type, strategy: params.strategy,
      deviceTypes: params.deviceTypes)
    let (stream, continuation) = AsyncStream.makeStream(
      of: SubscriptionEvent.self, bufferingPolicy: .bufferingNewest(params.eventBufferSize))
    let cell = StatusCell()
    await updatePermission(asking: params.permissionRequestHandler)
    guard !isShutDown else { throw ManagerError.shutDown }
    // Beacons alone: background as the beacon strategy says; with devices, both must allow.
    let allowsBackground =
      (!wantsDevices || params.strategy.allowInBackground)
      && (!wantsBeacons || params.beaconStrategy.allowInBackground)
    let run = pausing.addSubscription(
      spec.id, reach: allowsBackground ? .background : .foregroundOnly,
      keeper: wantsDevices ? .resolver : .local)
    var record = SubscriptionRecord(
      spec: spec, cell: cell, continuation: continuation, onFound: onFound, onLost: onLost,
      expiredHandler: params.expiredHandler)
    record.reportsToResolver = wantsDevices
    record.beaconStrategy = params.beaconStrategy
    if wantsBeacons {
      record.beacons = BeaconInterest(
        namespace: params.namespace, type: params.type,
        includeIBeacons: params.beaconStrategy.includeIBeacons, filters: params.beaconFilters)
    }
    subscriptions[spec.id] = record
    let handle = Subscription(id: spec.id, events: stream, manager: self, cell: cell)
    if !wantsDevices { startLocalExpiry(spec.id, ttl: params.strategy.ttl) }
    if run == .paused {
      cell.set(.paused)
      logger.debug("subscribed, paused", metadata: ["subscription": "\(spec.id)"])
      return handle
    }
    guard wantsDevices else {
      cell.set(.active)
      await reconcileBeaconScanning()
      logger.debug(
        "subscribed to beacons",
        metadata: [
          "subscription": "\(spec.id)", "namespace": "\(spec.namespace)",
          "type": "\(spec.type ?? "*")",
        ])
      return handle
    }
    do {
      try await send(Report(subscribe: [spec]))
    } catch {
      subscriptions[spec.id] = nil
      pausing.removeSubscription(spec.id)
      cell.set(.inactive)
      continuation.finish()
      if wantsBeacons {
        beaconTracking.forget(spec.id)
        await reconcileBeaconScanning()
      }
      if case ResolverError.unavailable = error {
        try? await send(Report(unsubscribe: [spec.id]))
      }
      throw error
    }
    guard !isShutDown else { throw ManagerError.shutDown }
    if subscriptions[spec.id] == nil {
      try? await send(Report(unsubscribe: [spec.id]))
    } else if pausing.isRunning(subscription: spec.id) {
      cell.set(.active)
      if wantsBeacons { await reconcileBeaconScanning() }
    }
    logger.debug(
      "subscribed",
      metadata: [
        "subscription": "\(spec.id)", "namespace": "\(spec.namespace)",
        "type": "\(spec.type ?? "*")",
      ])
    return handle
  }

  func unsubscribe(_ id: SubscriptionID) async {
    guard let record = subscriptions.removeValue(forKey: id) else { return }
    record.expiryTimer?.end()
    // Read and forgotten before any await: a replan meanwhile must not count it.
    let wasRunning = pausing.isRunning(subscription: id)
    pausing.removeSubscription(id)
    record.cell.set(.inactive)
    record.continuation.finish()
    if record.beacons != nil {
      beaconTracking.forget(id)
      await reconcileBeaconScanning()
    }
    guard wasRunning, record.reportsToResolver else { return }
    do {
      try await send(Report(unsubscribe: [id]))
      logger.debug("unsubscribed", metadata: ["subscription": "\(id)"])
    } catch {
      logger.warning(
        "unsubscribe failed", metadata: ["subscription": "\(id)", "error": "\(error)"])
    }
  }
}
