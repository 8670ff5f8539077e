import TestSupport
import Core
import Foundation
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

@Suite("MessageManager: Nearby permission")
struct PermissionTests {
  @Test("a granting request handler lets the first publication run and is recorded")
  func handlerGrants() async throws {
    let gate = TestGate()
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.permission = gate
    }
    let asked = Calls<Bool>()
    let publication = try await device.manager.publish(Message(text: "hi")) {
      $0.permissionRequestHandler = { respond in
        asked.append(true)
        respond(true)
      }
    }
    #expect(publication.status == .active)
    #expect(asked.all.count == 1)
    #expect(gate.recorded == [true])
    #expect(gate.asks == 0)
    // Answered: the next publish does not ask again.
    _ = try await device.manager.publish(Message(text: "again")) {
      $0.permissionRequestHandler = { _ in asked.append(true) }
    }
    #expect(asked.all.count == 1)
    await device.manager.shutdown()
  }

  @Test("denied: handles are paused, nothing is discovered, a later grant resumes them")
  func deniedThenGranted() async throws {
    let gate = TestGate()
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.permission = gate
    }
    let publication = try await device.manager.publish(Message(text: "hi")) {
      $0.permissionRequestHandler = { respond in respond(false) }
    }
    let subscription = try await device.manager.subscribe(configure: { _ in })
    #expect(publication.status == .paused)
    #expect(subscription.status == .paused)
    #expect(gate.recorded == [false])
    #expect(device.ble.transmittedToken == nil)
    #expect(!device.ble.isScanning && !device.audio.isScanning)
    #expect(await device.manager.currentToken == nil)
    #expect(await device.manager.isPermissionGranted == false)

    gate.change(to: true)
    #expect(await eventually { publication.status == .active && subscription.status == .active })
    #expect(await device.ble.until { device.ble.transmittedToken != nil && device.ble.isScanning })
    #expect(await device.manager.isPermissionGranted)

    gate.change(to: false)
    #expect(await eventually { publication.status == .paused && subscription.status == .paused })
    #expect(await device.ble.until { device.ble.transmittedToken == nil && !device.ble.isScanning })
    var seen: [HandleStatus] = []
    await publication.cancel()
    for await status in publication.statusUpdates { seen.append(status) }
    #expect(seen == [.starting, .paused, .active, .paused, .inactive])
    await device.manager.shutdown()
  }

  @Test("a grant found while publishing resumes the handles paused before it, not only the new one")
  func grantFoundWhilePublishing() async throws {
    let gate = TestGate(answer: false)
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.permission = gate
    }
    let first = try await device.manager.publish(Message(text: "first"))
    #expect(first.status == .paused)
    // Granted in another process; its notice has not arrived when the app publishes again.
    gate.changeQuietly(to: true)
    let second = try await device.manager.publish(Message(text: "second"))
    #expect(second.status == .active)
    #expect(first.status == .active)
    #expect(await device.manager.isPermissionGranted)
    await device.manager.shutdown()
  }

  @Test("a handler that never answers counts as denied after the timeout, and is not recorded")
  func handlerTimeout() async throws {
    let gate = TestGate()
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.permission = gate
      $0.permissionRequestTimeout = .milliseconds(100)
    }
    let subscription = try await device.manager.subscribe(configure: {
      $0.permissionRequestHandler = { _ in }
    })
    #expect(subscription.status == .paused)
    #expect(gate.recorded.isEmpty)
    #expect(await gate.answer() == nil)
    await device.manager.shutdown()
  }

  @Test("without a handler the gate asks; nobody to ask means paused; asked once at a time")
  func defaultPrompt() async throws {
    let gate = TestGate(askResult: nil)
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.permission = gate
    }
    let publication = try await device.manager.publish(Message(text: "x"))
    #expect(publication.status == .paused)
    #expect(gate.asks == 1)
    #expect(gate.recorded.isEmpty)
    await device.manager.shutdown()

    let yes = TestGate(askResult: true)
    let second = try await ScriptedDevice(resolver: InProcessResolver()) { $0.permission = yes }
    let manager = second.manager
    let handles = try await withThrowingTaskGroup(of: Publication.self) { group in
      for index in 0..<5 {
        group.addTask { try await manager.publish(Message(text: "m\(index)")) }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(handles.allSatisfy { $0.status == .active })
    #expect(yes.asks == 1)
    #expect(yes.recorded == [true])
    await manager.shutdown()
  }

  @Test("a recorded grant runs at once; a recorded denial pauses without asking")
  func recordedAnswers() async throws {
    let granted = TestGate(answer: true)
    let first = try await ScriptedDevice(resolver: InProcessResolver()) { $0.permission = granted }
    #expect(try await first.manager.publish(Message(text: "x")).status == .active)
    await first.manager.shutdown()

    let denied = TestGate(answer: false, askResult: true)
    let second = try await ScriptedDevice(resolver: InProcessResolver()) { $0.permission = denied }
    #expect(try await second.manager.publish(Message(text: "x")).status == .paused)
    #expect(denied.asks == 0)
    await second.manager.shutdown()
  }
}
