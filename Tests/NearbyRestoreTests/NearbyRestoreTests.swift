import TestSupport
import BackgroundPersistence
import Core
import Foundation
import MediumTestKit
import PermissionStore
import Strategy
import Testing
import NearbyTesting

/// The nearby-restore launcher as systemd runs it, and the CLI that sets it up.
@Suite("nearby-restore", .serialized)
struct NearbyRestoreTests {
  struct Folder {
    let url: URL
    init() throws {
      url = URL(fileURLWithPath: "/tmp").appendingPathComponent(
        "nearby-restore-\(UUID().uuidString.prefix(8))")
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func remove() { try? FileManager.default.removeItem(at: url) }
  }

  /// A store with background mode on, permission granted, one publication and two
  /// subscriptions recorded.
  static func prepareStore(_ app: String, in folder: Folder) async throws {
    let store = try await DefaultsStore(appID: app, directory: folder.url)
    let background = BackgroundPersistence(store: store)
    try await NearbyPermission(store: store, prompt: .never).setGranted(true)
    try await background.setEnabled(true)
    try await background.add(
      BackgroundPublication(message: Message(text: "hi"), strategy: .bleOnly))
    try await background.add(BackgroundSubscription(namespace: "a", strategy: .bleOnly))
    try await background.add(BackgroundSubscription(namespace: "b", strategy: .bleOnly))
    store.close()
  }

  @Test("tells systemd READY=1 with a STATUS line, and stops cleanly on SIGTERM")
  func readinessAndSIGTERM() async throws {
    let folder = try Folder()
    defer { folder.remove() }
    try await Self.prepareStore("restore.test", in: folder)
    let socket = try NotifySocket(path: folder.url.appendingPathComponent("notify").path)
    defer { socket.stop() }
    var environment = ProcessInfo.processInfo.environment
    environment["NOTIFY_SOCKET"] = socket.path
    let restore = try Executables.find("nearby-restore")
    let running = try RunningProcess(
      restore,
      ["--app", "restore.test", "--config-dir", folder.url.path, "--log-to", "stderr"],
      environment: environment)
    defer { running.kill() }

    let ready = await socket.until(timeout: .seconds(20)) {
      socket.received.contains { $0.contains("READY=1") }
    }
    #expect(ready, "no READY=1; stderr: \(running.errors)")
    let message = socket.received.first { $0.contains("READY=1") } ?? ""
    #expect(message.contains("STATUS=restored 1 publications, 2 subscriptions"))

    running.signal(SIGTERM)
    let status = await running.exitStatus()
    #expect(status == 0, "stderr: \(running.errors)")
    #expect(socket.received.contains { $0.contains("STOPPING=1") })
  }

  @Test("with background mode off it waits, and follows the store when work is recorded")
  func followsTheStore() async throws {
    let folder = try Folder()
    defer { folder.remove() }
    let socket = try NotifySocket(path: folder.url.appendingPathComponent("notify").path)
    defer { socket.stop() }
    var environment = ProcessInfo.processInfo.environment
    environment["NOTIFY_SOCKET"] = socket.path
    let running = try RunningProcess(
      try Executables.find("nearby-restore"),
      ["--app", "follow.test", "--config-dir", folder.url.path, "--log-to", "stderr"],
      environment: environment)
    defer { running.kill() }
    #expect(
      await socket.until(timeout: .seconds(20)) {
        socket.received.contains { $0.contains("READY=1\nSTATUS=background mode is off") }
      }, "stderr: \(running.errors)")

    // The app (another process) turns background mode on and records a subscription.
    let store = try await DefaultsStore(appID: "follow.test", directory: folder.url)
    let background = BackgroundPersistence(store: store)
    try await NearbyPermission(store: store, prompt: .never).setGranted(true)
    try await background.setEnabled(true)
    let subscription = try await background.add(
      BackgroundSubscription(namespace: "n", strategy: .bleOnly))
    #expect(
      await socket.until() {
        socket.received.contains { $0 == "STATUS=restored 0 publications, 1 subscriptions" }
      }, "\(socket.received)")
    try await background.remove(id: subscription.id)
    #expect(
      await socket.until() {
        socket.received.last == "STATUS=restored 0 publications, 0 subscriptions"
      }, "\(socket.received)")

    running.signal(SIGTERM)
    #expect(await running.exitStatus() == 0, "\(running.errors)")
    #expect(running.errors.contains("nearby background on --app follow.test"))
  }

  @Test("--no-notifications is accepted and documented; without a session bus it still runs")
  func notificationsFlag() async throws {
    let folder = try Folder()
    defer { folder.remove() }
    try await Self.prepareStore("flag.test", in: folder)
    let restore = try Executables.find("nearby-restore")
    let help = try await Executables.run(restore, ["--help"])
    #expect(help.out.contains("--no-notifications"))
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(folder.url.path)/no-bus"
    for flags in [["--no-notifications"], []] {
      let result = try await Executables.run(
        restore,
        ["--app", "flag.test", "--config-dir", folder.url.path, "--log-to", "stderr", "--once"]
          + flags, environment: environment)
      #expect(result.status == 0, "\(flags): \(result.err)")
      #expect(result.out.contains("restored 1 publications and 2 subscriptions"), "\(result.out)")
    }
  }

  @Test("journal entries carry the fields, seen through a journald the test starts")
  func journalFields() async throws {
    try #require(
      getuid() == 0, "starting journald in a private mount namespace needs root (CI runs as root)")
    let folder = try Folder()
    defer { folder.remove() }
    try await Self.prepareStore("journal.test", in: folder)
    let restore = try Executables.find("nearby-restore")
    let result = try await Executables.run(
      URL(fileURLWithPath: "/usr/bin/unshare"),
      [
        "--mount", "--propagation", "private", "/bin/bash", "-c", Self.journalScript, "journal",
        restore.path, folder.url.path,
      ], timeout: 60)
    #expect(result.status == 0, "\(result.err)")
    let entries = result.out.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    let ready = try #require(
      entries.first { $0["MESSAGE"] as? String == "ready" }, "no 'ready' entry in \(result.out)")
    #expect(ready["SYSLOG_IDENTIFIER"] as? String == "nearby-restore")
    #expect(ready["PRIORITY"] as? String == "6")
    #expect(ready["NEARBY_APP"] as? String == "journal.test")
    #expect(ready["LOGGER_LABEL"] as? String == "nearby.restore")
    #expect((ready["STATUS"] as? String)?.contains("restored 1 publications") == true)
    #expect((ready["CODE_FILE"] as? String)?.contains("RestoreService.swift") == true)
    #expect(ready["_TRANSPORT"] as? String == "journal")
  }

  /// Starts journald in the private mount namespace of `unshare` (fresh tmpfs over /run and
  /// /var/log, so nothing of the machine's is touched), runs nearby-restore --once logging to
  /// the journal, and prints its entries as JSON lines.
  static let journalScript = """
    set -eu
    restore=$1 dir=$2
    mount -t tmpfs tmpfs /run
    mount -t tmpfs tmpfs /var/log
    mkdir -p /run/systemd/journal /run/log
    /lib/systemd/systemd-journald >/dev/null 2>&1 &
    journald=$!
    trap 'kill $journald 2>/dev/null || true' EXIT
    for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
    [ -S /run/systemd/journal/socket ] || { echo "journald did not start" >&2; exit 3; }
    "$restore" --app journal.test --config-dir "$dir" --log-to journal --once >/dev/null
    for _ in $(seq 100); do
      out=$(journalctl --no-pager -o json SYSLOG_IDENTIFIER=nearby-restore 2>/dev/null || true)
      case "$out" in *'"MESSAGE":"ready"'*) break ;; esac
      sleep 0.05
    done
    printf '%s\\n' "$out"
    """

  @Test("nearby background install writes a Type=notify unit that systemd-analyze verifies")
  func installUnit() async throws {
    let folder = try Folder()
    defer { folder.remove() }
    let restore = try Executables.find("nearby-restore")
    let units = folder.url.appendingPathComponent("units")
    let result = try await Executables.run(
      try Executables.find("nearby"),
      [
        "background", "install", "--app", "com.example.kiosk", "--config-dir", folder.url.path,
        "--unit-dir", units.path, "--restore-path", restore.path, "--no-enable", "--json",
        "--server", "http://127.0.0.1:7171",
      ])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out.contains("\"enabled\":false"))
    #expect(
      result.out.contains("systemctl --user enable --now nearby-restore-com.example.kiosk.service"))
    let unit = units.appendingPathComponent("nearby-restore-com.example.kiosk.service")
    let text = try String(contentsOf: unit, encoding: .utf8)
    #expect(text.contains("Type=notify"))
    #expect(text.contains("Restart=on-failure"))
    #expect(text.contains("ExecStart=\(restore.path) --app com.example.kiosk"))
    #expect(text.contains("--server http://127.0.0.1:7171"))
    let verify = try await Executables.run(
      URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["verify", unit.path])
    #expect(verify.status == 0, "systemd-analyze verify: \(verify.err)")
  }

  @Test("nearby permission and nearby background edit the store an app reads")
  func cli() async throws {
    let folder = try Folder()
    defer { folder.remove() }
    let nearby = try Executables.find("nearby")
    let common = ["--app", "cli.test", "--config-dir", folder.url.path, "--json"]
    var result = try await Executables.run(nearby, ["permission", "status"] + common)
    #expect(result.out.contains("\"permission\":\"not-asked\""))
    result = try await Executables.run(nearby, ["permission", "grant"] + common)
    #expect(result.status == 0 && result.out.contains("\"permission\":\"granted\""))
    result = try await Executables.run(nearby, ["background", "on"] + common)
    #expect(result.out.contains("\"backgroundMode\":true"))
    result = try await Executables.run(
      nearby, ["background", "subscribe", "--namespace", "shop", "--type", "offer"] + common)
    #expect(result.status == 0, "\(result.err)")
    result = try await Executables.run(
      nearby, ["background", "subscribe", "--ttl", "1e9"] + common)
    #expect(result.status != 0)
    #expect(result.err.contains("86400") || result.err.contains("86 400"))

    let store = try await DefaultsStore(appID: "cli.test", directory: folder.url)
    #expect(NearbyPermission(store: store, prompt: .never).isGranted)
    let background = BackgroundPersistence(store: store)
    #expect(background.isEnabled)
    let subscription = try #require(background.subscriptions.first)
    #expect(subscription.namespace == "shop" && subscription.type == "offer")
    #expect(subscription.strategy.mediums == .ble && subscription.strategy.allowInBackground)

    result = try await Executables.run(nearby, ["permission", "revoke"] + common)
    #expect(result.out.contains("\"permission\":\"denied\""))
    result = try await Executables.run(nearby, ["background", "remove", subscription.id] + common)
    #expect(result.status == 0)
    try await store.reload()
    #expect(background.subscriptions.isEmpty)
    #expect(!NearbyPermission(store: store, prompt: .never).isGranted)
  }
}
