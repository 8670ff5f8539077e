import Core
import Foundation
import InMemoryLogging
import Logging
import MediumTestKit
import PermissionStore
import Resolution
import Strategy
import Testing
import TestSupport
import NearbyTesting

@Suite("NearbyPermission")
struct NearbyPermissionTests {
  final class Seen: Sendable {
    let values = Watched<[Bool]>([])
    var all: [Bool] { values.value }
  }

  @Test("setGranted is stored; changes and changedHandler fire on each change, not at creation")
  func grantAndRevoke() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let seen = Seen()
    let permission = try await NearbyPermission(
      appID: "app", directory: folder.url, prompt: .never
    ) { granted in
      seen.values.withLock { $0.append(granted) }
    }
    let changes = StreamRecorder(permission.changes())
    #expect(!permission.isGranted && !permission.isDetermined)
    #expect(seen.all.isEmpty)

    // The handler and the stream report in order: had creation been reported, it would come
    // before this change.
    try await permission.setGranted(true)
    #expect(permission.isGranted && permission.isDetermined)
    #expect(await seen.values.until { $0 == [true] })
    #expect(await changes.until { $0 == [true] })

    // Another process (here: another store on the same file) revokes it.
    let other = try await NearbyPermission(appID: "app", directory: folder.url, prompt: .never)
    #expect(other.isGranted)
    try await other.setGranted(false)
    #expect(await seen.values.until { $0 == [true, false] })
    #expect(await changes.until { $0 == [true, false] })
    #expect(!permission.isGranted && permission.isDetermined)

    try await other.setGranted(false)  // no change, no call
    try await permission.reset()
    #expect(!permission.isDetermined)
    // A change after both: once it is reported, a call for either would have come before it.
    try await other.setGranted(true)
    #expect(await seen.values.until { $0.count == 3 })
    #expect(await changes.until { $0.count == 3 })
    #expect(seen.all == [true, false, true])
    #expect(changes.elements == [true, false, true])
  }

  @Test("a manager pauses while denied and resumes when `nearby permission grant` runs elsewhere")
  func managerFollowsTheStore() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let permission = try await NearbyPermission(appID: "app", directory: folder.url, prompt: .never)
    let medium = ScriptedMedium(kind: .ble)
    let logs = InMemoryLogHandler.keepingEverything()
    var configuration = MessageManager.Configuration(
      resolver: .inProcess(try InProcessResolver()), mediums: [.scripted(medium)],
      logger: Logger(label: "test") { _ in logs })
    configuration.permission = permission
    let manager = try await MessageManager(apiKey: "k", configuration: configuration)

    // No handler, no terminal: not granted, nothing recorded, nothing discovered.
    let subscription = try await manager.subscribe(configure: { _ in })
    #expect(subscription.status == .paused)
    #expect(!permission.isDetermined)
    #expect(!medium.isScanning)
    #expect(
      logs.messages.contains {
        $0.0 == .warning && $0.1.contains("no terminal")
          && $0.1.contains("nearby permission grant --app app")
      })

    let elsewhere = try await DefaultsStore(appID: "app", directory: folder.url)
    try await elsewhere.set(true, forKey: NearbyPermission.key)
    #expect(await eventually { subscription.status == .active && medium.isScanning })

    // The app's own handler answers "no" for a new app id: recorded as denied.
    let denied = try await NearbyPermission(appID: "app2", directory: folder.url, prompt: .never)
    var second = configuration
    second.permission = denied
    let other = try await MessageManager(apiKey: "k", configuration: second)
    let publication = try await other.publish(Message(text: "x")) {
      $0.permissionRequestHandler = { respond in respond(false) }
    }
    #expect(publication.status == .paused)
    #expect(denied.isDetermined && !denied.isGranted)
    await manager.shutdown()
    await other.shutdown()
  }

  @Test("the default prompt asks y/n on a terminal and explains what is used")
  func terminalPrompt() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let terminal = try PseudoTerminal()
    defer { terminal.close() }
    let permission = try await NearbyPermission(
      store: DefaultsStore(appID: "kiosk", directory: folder.url),
      prompt: .terminal(input: terminal.follower, output: terminal.follower))
    async let answer = permission.ask(logger: Logger(label: "test"))
    let question = try await terminal.read(until: "[y/N] ")
    #expect(question.contains("Bluetooth LE"))
    #expect(question.contains("Allow Nearby for kiosk?"))
    terminal.type("y\n")
    #expect(await answer == true)

    async let second = permission.ask(logger: Logger(label: "test"))
    _ = try await terminal.read(until: "[y/N] ")
    terminal.type("no\n")
    #expect(await second == false)
  }

  @Test("without a terminal nobody is asked")
  func noTerminal() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let pipe = Pipe()
    let permission = try await NearbyPermission(
      store: DefaultsStore(appID: "svc", directory: folder.url),
      prompt: .terminal(input: pipe.fileHandleForReading.fileDescriptor))
    #expect(await permission.ask(logger: Logger(label: "test")) == nil)
    #expect(permission.howToGrant.contains("nearby permission grant --app svc"))
  }
}
