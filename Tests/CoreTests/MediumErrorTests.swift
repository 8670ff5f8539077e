import Core
import MediumTestKit
import Resolution
import Testing

@Suite("Medium status → error handlers and the errors stream")
struct MediumErrorTests {
  @Test("Bluetooth power, Bluetooth permission and microphone permission, set and cleared")
  func handlers() async throws {
    let power = Calls<Bool>()
    let bluetoothPermission = Calls<Bool>()
    let microphone = Calls<Bool>()
    let device = try await ScriptedDevice(resolver: InProcessResolver()) {
      $0.bluetoothPowerErrorHandler = { power.append($0) }
      $0.bluetoothPermissionErrorHandler = { bluetoothPermission.append($0) }
      $0.microphonePermissionErrorHandler = { microphone.append($0) }
    }
    var errors = device.manager.errors.makeAsyncIterator()

    device.ble.setStatus(.poweredOff)
    var error = try #require(await errors.next())
    #expect(error.kind == .bluetoothPower && error.isActive && error.medium == .ble)
    device.ble.setStatus(.ready)
    error = try #require(await errors.next())
    #expect(error.kind == .bluetoothPower && !error.isActive)
    #expect(power.all == [true, false])

    device.ble.setStatus(.permissionDenied("add yourself to the bluetooth group"))
    error = try #require(await errors.next())
    #expect(error.kind == .bluetoothPermission && error.message.contains("bluetooth group"))
    #expect(bluetoothPermission.all == [true])

    device.audio.setStatus(.permissionDenied("PulseAudio refused the source"))
    error = try #require(await errors.next())
    #expect(error.kind == .microphonePermission && error.medium == .audio)
    device.audio.setStatus(.ready)
    error = try #require(await errors.next())
    #expect(error.kind == .microphonePermission && !error.isActive)
    #expect(microphone.all == [true, false])
    await device.manager.shutdown()
  }

  @Test("status kinds map per medium")
  func mapping() {
    #expect(MediumError.kind(for: .ready, on: .ble) == nil)
    #expect(MediumError.kind(for: .poweredOff, on: .ble) == .bluetoothPower)
    #expect(MediumError.kind(for: .permissionDenied(""), on: .ble) == .bluetoothPermission)
    #expect(MediumError.kind(for: .permissionDenied(""), on: .audio) == .microphonePermission)
    #expect(MediumError.kind(for: .unavailable("no server"), on: .audio) == .unavailable)
  }
}

@Suite("Debug logging switch", .serialized)
struct DebugLoggingTests {
  @Test("setDebugLoggingEnabled is read by new managers")
  func toggle() {
    let before = MessageManager.isDebugLoggingEnabled
    MessageManager.setDebugLoggingEnabled(true)
    #expect(MessageManager.isDebugLoggingEnabled)
    MessageManager.setDebugLoggingEnabled(false)
    #expect(!MessageManager.isDebugLoggingEnabled)
    MessageManager.setDebugLoggingEnabled(before)
  }
}
