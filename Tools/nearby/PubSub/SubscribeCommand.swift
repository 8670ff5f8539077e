import ArgumentParser
import BackgroundPersistence
import Core
import Foundation
import Glibc
import PermissionStore
import Strategy

/// `nearby subscribe`: a live table of the messages present nearby, or one JSON event a line.
struct SubscribeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "subscribe",
    abstract: "Show the messages of nearby devices as they are found and lost, until Ctrl-C.",
    discussion: """
      On a terminal it keeps a live table (message, type, namespace, medium, since, signal) \
      that updates as messages are found and lost; when stdout is not a terminal it prints \
      one line per change, and with --json one JSON object a line (event found or lost, \
      text, base64 content, type, namespace, mediums, time). Mediums and the resolver are \
      chosen as for `nearby publish`.

      \(ExitCodes.help)

      Examples:
        nearby subscribe
        nearby subscribe --type menu --namespace com.example.cafe
        nearby subscribe --mediums lan --lan-interface eth0 --json | jq .text
        nearby subscribe --server http://resolver.local:7171 --api-key KEY
        nearby subscribe --background --mediums ble --type offer --app com.example.kiosk
      """)

  @Option(help: "Only messages of this type (default: every type).") var type: String?
  @Option(help: "Messages of this namespace (default: the project's).") var namespace = ""
  @Flag(
    help: """
      Record the subscription for background restore (nearby-restore) instead of running it \
      here; BLE-only, as in the original API.
      """)
  var background = false
  @Option(help: "The app id whose store keeps --background work.") var app = "nearby"
  @OptionGroup var options: DiscoveryOptions

  func validate() throws {
    if let type {
      do { try Message.validate(type: type) } catch { throw ValidationError("--type: \(error)") }
    }
    do { try Message.validate(namespace: namespace) } catch {
      throw ValidationError("--namespace: \(error)")
    }
    if background, try options.requestedMediums() != .ble {
      throw ValidationError(
        "--background work is BLE-only (as in the original API): add --mediums ble")
    }
  }

  func run() async throws {
    do {
      if background {
        try await recordBackground()
        return
      }
      try await subscribe()
    } catch let failure as ExitFailure {
      FileHandle.standardError.write(Data("error: \(failure.description)\n".utf8))
      throw failure.code
    }
  }

  /// Records the subscription in the app's store for `nearby-restore` to run.
  private func recordBackground() async throws {
    var strategy = try options.strategy()
    strategy.mediums = .ble
    let store = BackgroundPersistence(store: try await DefaultsStore(appID: app))
    let recorded = try await store.add(
      BackgroundSubscription(namespace: namespace, type: type, strategy: strategy))
    EventOutput(json: options.json).note(
      "recorded background subscription \(recorded.id) for app \(app); nearby-restore "
        + "--app \(app) runs it (`nearby background on --app \(app)` enables restore)")
  }

  private enum Step {
    case event(SubscriptionEvent)
    case tick
    case stop(String)
  }

  private func subscribe() async throws {
    let signals = SignalStream.make()
    let session = try await DiscoverySession.start(options, label: "nearby.subscribe")
    let output = session.output
    let strategy = try session.strategy(options)
    let (type, namespace) = (type, namespace)
    let subscription: Subscription
    do {
      subscription = try await session.manager.subscribe(configure: { params in
        params.strategy = strategy
        params.type = type
        params.namespace = namespace
      })
    } catch {
      await session.manager.shutdown()
      throw ExitFailure("cannot subscribe: \(error)", code: ExitCodes.failure)
    }
    let errors = session.followMediumErrors()
    let live = !options.json && isatty(STDOUT_FILENO) == 1
    let (steps, step) = AsyncStream.makeStream(of: Step.self, bufferingPolicy: .unbounded)
    let events = subscription.events
    let reader = Task {
      for await event in events { step.yield(.event(event)) }
      step.yield(.stop("the subscription ended"))
    }
    let waiter = Task {
      for await number in signals {
        step.yield(.stop(number == SIGINT ? "interrupted" : "terminated"))
        return
      }
    }
    let ticker = Task {
      while live, !Task.isCancelled {
        try? await Task.sleep(for: .seconds(1))
        step.yield(.tick)
      }
    }
    var table = LiveTable(mediums: strategy.mediums)
    func write(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    // Home, clear the screen, then the table.
    func draw() { write("\u{1B}[H\u{1B}[2J" + table.render()) }
    if live { draw() }
    var reason = "stopped"
    loop: for await next in steps {
      switch next {
      case .event(.found(let message)):
        table.found(message)
        if options.json {
          output.message("found", message, mediums: strategy.mediums)
        } else if live {
          draw()
        } else {
          write("found \(EventOutput.preview(message)) type=\"\(message.type)\"")
        }
      case .event(.lost(let message)):
        table.lost(message)
        if options.json {
          output.message("lost", message, mediums: strategy.mediums)
        } else if live {
          draw()
        } else {
          write("lost \(EventOutput.preview(message)) type=\"\(message.type)\"")
        }
      case .event(.distanceChanged), .event(.signalChanged):
        continue
      case .event(.expired):
        reason = "the subscription's TTL ran out"
        break loop
      case .tick:
        if live { draw() }
      case .stop(let why):
        reason = why
        break loop
      }
    }
    waiter.cancel()
    ticker.cancel()
    reader.cancel()
    errors.cancel()
    await subscription.cancel()
    await session.manager.shutdown()
    output.note("unsubscribed (\(reason))")
  }
}
