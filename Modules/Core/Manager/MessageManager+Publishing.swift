extension MessageManager {
  /// Publishes `message` until the returned publication is cancelled, released, or expires.
  /// `configure` runs on the caller's executor before anything is sent.
  ///
  /// - Parameters:
  ///   - message: what to publish.
  ///   - configure: sets the ``PublicationParams`` (strategy, expired handler).
  /// - Throws: ``MessageError`` or `StrategyError` naming the limit or rule broken,
  ///   ``ManagerError/shutDown``, or the resolver's error.
  public nonisolated(nonsending) func publish(
    _ message: Message, configure: (inout PublicationParams) throws -> Void = { _ in }
  ) async throws -> Publication {
    var params = PublicationParams()
    try configure(&params)
    return try await publish(message, params: params)
  }

  /// Publishes `message` with `params`; see ``publish(_:configure:)``.
  public func publish(_ message: Message, params: PublicationParams) async throws -> Publication {
    guard !isShutDown else { throw ManagerError.shutDown }
    try message.validate()
    try params.strategy.validate()
    let spec = PublicationSpec(id: .random(), message: message, strategy: params.strategy)
    let cell = StatusCell()
    await updatePermission(asking: params.permissionRequestHandler)
    guard !isShutDown else { throw ManagerError.shutDown }
    let run = pausing.addPublication(
      spec.id, reach: params.strategy.allowInBackground ? .background : .foregroundOnly)
    publications[spec.id] = PublicationRecord(
      spec: spec, cell: cell, expiredHandler: params.expiredHandler)
    let handle = Publication(
      id: spec.id, message: message, strategy: params.strategy, manager: self, cell: cell)
    if run == .paused {
      cell.set(.paused)
      logger.debug("published, paused", metadata: ["publication": "\(spec.id)"])
      return handle
    }
    do {
      try await send(Report(publish: [spec]))
    } catch {
      publications[spec.id] = nil
      pausing.removePublication(spec.id)
      cell.set(.inactive)
      if case ResolverError.unavailable = error {
        // The resolver may have taken it before the connection failed.
        try? await send(Report(unpublish: [spec.id]))
      }
      throw error
    }
    guard !isShutDown else { throw ManagerError.shutDown }
    if publications[spec.id] == nil {
      // Cancelled while the resolver was being told: make sure it is gone there too.
      try? await send(Report(unpublish: [spec.id]))
    } else if pausing.isRunning(publication: spec.id) {
      cell.set(.active)
    }
    logger.debug("published", metadata: ["publication": "\(spec.id)", "message": "\(message)"])
    return handle
  }

  func unpublish(_ id: PublicationID) async {
    guard let record = publications.removeValue(forKey: id) else { return }
    record.cell.set(.inactive)
    let wasRunning = pausing.isRunning(publication: id)
    pausing.removePublication(id)
    guard wasRunning else { return }
    do {
      try await send(Report(unpublish: [id]))
      logger.debug("unpublished", metadata: ["publication": "\(id)"])
    } catch {
      logger.warning("unpublish failed", metadata: ["publication": "\(id)", "error": "\(error)"])
    }
  }
}
