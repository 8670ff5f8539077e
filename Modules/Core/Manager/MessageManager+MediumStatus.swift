extension MessageManager {
  /// Maps a medium's status to the error handlers and the `errors` stream. When a medium
  /// recovers, it is told again what to transmit and whether to scan (chores).
  func mediumStatusChanged(_ index: Int, _ status: MediumStatus) {
    let medium = slots[index].medium
    let kind = MediumError.kind(for: status, on: medium.kind)
    let previous = slots[index].problem
    guard kind != previous else { return }
    slots[index].problem = kind
    if let previous {
      report(MediumError(kind: previous, medium: medium.kind, isActive: false, message: "cleared"))
    }
    if let kind {
      let message: String
      switch status {
      case .ready: message = ""
      case .poweredOff: message = "\(medium.name) is powered off or missing"
      case .permissionDenied(let text), .unavailable(let text): message = text
      }
      report(MediumError(kind: kind, medium: medium.kind, isActive: true, message: message))
    } else if previous != nil {
      slots[index].transmitting = nil
      slots[index].scanning = false
      slots[index].beaconScan = nil
      request(.reconcileMediums)
      request(.reconcileBeaconScanning)
    }
  }

  private func report(_ error: MediumError) {
    if error.isActive {
      logger.warning(
        "medium problem",
        metadata: ["kind": "\(error.kind.rawValue)", "message": "\(error.message)"])
    } else {
      logger.info("medium problem cleared", metadata: ["kind": "\(error.kind.rawValue)"])
    }
    switch error.kind {
    case .microphonePermission: configuration.microphonePermissionErrorHandler?(error.isActive)
    case .bluetoothPower: configuration.bluetoothPowerErrorHandler?(error.isActive)
    case .bluetoothPermission: configuration.bluetoothPermissionErrorHandler?(error.isActive)
    case .unavailable: break
    }
    errorsContinuation.yield(error)
  }
}
