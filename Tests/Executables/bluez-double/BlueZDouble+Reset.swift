import DBus
import Foundation

/// `Reset`: back to the state the double starts in, between tests.
extension BlueZDouble {
  func reset() async {
    await resetGatt()
    denied.value = false
    quietMonitors = false
    failures = [:]
    stalled = []
    rssiOverrides = [:]
    refusedMonitors = [:]
    for name in adapters.keys {
      adapters[name]?.monitors = [:]
      adapters[name]?.monitorApps = []
      adapters[name]?.refuseMonitors = 0
      await setMonitorSupport(name, false)
    }
    reportInterval = .milliseconds(100)
    temporaryTimeout = .zero
    heardOnceGap = nil
    returning = [:]
    for name in adapters.keys where !(adapters[name]!.present) { await setPresent(name, true) }
    for (name, adapter) in adapters {
      for (key, _) in adapter.adverts { await release(key, on: name) }
      adapters[name]?.adverts = [:]
      adapters[name]?.discovery = [:]
      adapters[name]?.filters = [:]
      adapters[name]?.supportedInstances = 5
      try? await connection?.setProperty(
        "SupportedInstances", to: .byte(5), interface: "org.bluez.LEAdvertisingManager1",
        at: adapter.path)
      await poweredChanged(name, true, fromPeer: false)
      await updateCounts(name)
    }
    for path in devices.keys { await connection?.unexport(at: path) }
    devices = [:]
  }
}
