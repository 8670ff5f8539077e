// An app of two devices on one machine: "kiosk" publishes a message, "visitor" subscribes;
// the visitor finds the kiosk's message through a resolver server, then loses it when the
// kiosk stops publishing. Nearness comes from the LAN medium on one interface (BLE and audio
// join with --ble and --audio on a machine that has them).
//
//   nearby-server --port 7171 &                    # prints the first API key, or:
//   nearby-server keys create --project example --role client  # this app's key
//   swift run NearbyExample --server http://127.0.0.1:7171 --api-key nk_… --interface lo
//
// Exits 0 when the message was found and then lost, 1 on a timeout, 64 on bad arguments.

import AudioPulse
import BLEBlueZ
import BackgroundPersistence
import Core
import Foundation
import LANMulticast
import PermissionStore
import ServerResolver
import Strategy

@main
struct NearbyExample {
  struct Options {
    var server: URL
    var apiKey: String
    var interface = "lo"
    var port: UInt16 = 7272
    var ble = false
    var audio = false
    var timeout: Duration = .seconds(30)
  }

  static func main() async {
    let options: Options
    do {
      options = try parse(Array(CommandLine.arguments.dropFirst()))
    } catch {
      fail(
        "\(error)\nusage: NearbyExample --server URL --api-key KEY [--interface lo] "
          + "[--port 7272] [--ble] [--audio] [--timeout SECONDS]", code: 64)
    }
    do {
      try await run(options)
    } catch {
      fail("\(error)", code: 1)
    }
  }

  static func run(_ options: Options) async throws {
    // Consent, as an app records it: a per-app defaults file (here in a folder of our own,
    // so the example leaves nothing behind in ~/.config/nearby).
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("nearby-example-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let permission = try await NearbyPermission(
      appID: "com.example.nearby-example", directory: folder, prompt: .never)
    try await permission.setGranted(true)

    // Background work is BLE only: the library says so before anything is recorded.
    let background = BackgroundPersistence(store: permission.store)
    do {
      _ = try BackgroundPersistence.backgroundStrategy(Strategy(mediums: .lan))
      fail("a LAN-only strategy was accepted for background work", code: 1)
    } catch {
      say("background mode \(background.isEnabled ? "on" : "off"); LAN in background: \(error)")
    }

    // The mediums: LAN on the given interface, plus BLE (BlueZ) and audio (PulseAudio) if asked.
    var mediums: [MediumProvider] = [
      .lan(LANMulticastConfiguration(port: options.port, interface: options.interface))
    ]
    var strategyMediums: DiscoveryMediums = .lan
    if options.ble {
      mediums.append(.bluez())
      strategyMediums.insert(.ble)
    }
    if options.audio {
      mediums.append(.pulseAudio())
      strategyMediums.insert(.audio)
    }
    func manager() async throws -> MessageManager {
      try await MessageManager(
        apiKey: options.apiKey,
        configuration: .init(
          resolver: .server(options.server, credentialStore: InMemoryCredentialStore()),
          mediums: mediums, permission: permission))
    }
    let kiosk = try await manager()
    let visitor = try await manager()
    say("kiosk is device \(kiosk.deviceID), visitor is device \(visitor.deviceID)")

    let message = Message(
      text: "Today's menu: soup", type: "menu", namespace: "com.example.nearby-example")
    let publication = try await kiosk.publish(message) { params in
      params.strategy = Strategy(mediums: strategyMediums)
    }
    let subscription = try await visitor.subscribe(configure: { params in
      params.strategy = Strategy(mediums: strategyMediums)
      params.namespace = "com.example.nearby-example"
      params.type = "menu"
    })

    let outcome = try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        var found = false
        for await event in subscription.events {
          switch event {
          case .found(let got) where got == message:
            say("found: \(got.text ?? "")")
            found = true
            // Found: the kiosk stops publishing, and the visitor must lose the message.
            await publication.cancel()
          case .lost(let got) where got == message && found:
            say("lost: \(got.text ?? "")")
            return true
          default:
            continue
          }
        }
        return false
      }
      group.addTask {
        try await Task.sleep(for: options.timeout)
        return false
      }
      let first = try await group.next() ?? false
      group.cancelAll()
      return first
    }
    await subscription.cancel()
    await kiosk.shutdown()
    await visitor.shutdown()
    guard outcome else {
      fail("the message was not found and lost within \(options.timeout)", code: 1)
    }
    say("done")
  }

  static func parse(_ arguments: [String]) throws -> Options {
    var server: URL?
    var apiKey = ProcessInfo.processInfo.environment["NEARBY_API_KEY"]
    var options = Options(server: URL(fileURLWithPath: "/"), apiKey: "")
    var rest = arguments[...]
    func value(_ name: String) throws -> String {
      guard let next = rest.popFirst() else { throw UsageError("\(name) needs a value") }
      return next
    }
    while let argument = rest.popFirst() {
      switch argument {
      case "--server":
        let text = try value(argument)
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
          throw UsageError("--server must be an http(s) URL, got '\(text)'")
        }
        server = url
      case "--api-key": apiKey = try value(argument)
      case "--interface": options.interface = try value(argument)
      case "--port":
        let text = try value(argument)
        guard let port = UInt16(text), port > 0 else {
          throw UsageError("--port must be 1-65535, got '\(text)'")
        }
        options.port = port
      case "--timeout":
        let text = try value(argument)
        guard let seconds = Int(text), seconds > 0 else {
          throw UsageError("--timeout must be a number of seconds, got '\(text)'")
        }
        options.timeout = .seconds(seconds)
      case "--ble": options.ble = true
      case "--audio": options.audio = true
      default: throw UsageError("unknown argument '\(argument)'")
      }
    }
    guard let server else { throw UsageError("--server is required") }
    guard let apiKey, !apiKey.isEmpty else {
      throw UsageError("--api-key (or NEARBY_API_KEY) is required")
    }
    options.server = server
    options.apiKey = apiKey
    return options
  }

  struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  static func say(_ line: String) {
    print("nearby-example: \(line)")
  }

  static func fail(_ line: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("nearby-example: error: \(line)\n".utf8))
    exit(code)
  }
}
