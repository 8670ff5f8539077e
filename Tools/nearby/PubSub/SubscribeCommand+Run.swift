import Core
import Foundation
import Glibc
import Strategy

extension SubscribeCommand {
  /// Subscribes on a fresh discovery session and shows what is found and lost until the
  /// subscription ends or a signal arrives; then unsubscribes and shuts the manager down.
  func subscribe() async throws {
    let signals = SignalStream.make()
    let session = try await DiscoverySession.start(
      options, label: "nearby.subscribe", mediums: beacons ? .ble : nil, beacons: beacons)
    let strategy = try session.strategy(options)
    let (type, namespace, beacons) = (type, namespace, beacons)
    let beaconStrategy = BeaconStrategy(
      includeIBeacons: !noIbeacons, lowPowerPreferred: !activeScan)
    let filters = try beaconFilters()
    let subscription: Subscription
    do {
      subscription = try await session.manager.subscribe(configure: { params in
        params.strategy = strategy
        params.type = type
        params.namespace = namespace
        if beacons {
          params.deviceTypes = .bleBeacons
          params.beaconStrategy = beaconStrategy
          params.beaconFilters = filters
        }
      })
    } catch {
      await session.manager.shutdown()
      throw ExitFailure("cannot subscribe: \(error)", code: ExitCodes.failure)
    }
    let live = !options.json && isatty(STDOUT_FILENO) == 1
    let banner = ScreenBanner()
    let web: Task<Void, Never>?
    do {
      web = try await WebSession.start(
        options, session: session, logger: options.logger(label: "nearby.web"),
        banner: live ? banner : nil)
    } catch {
      await subscription.cancel()
      await session.shutdown()
      throw error
    }
    let errors = session.followMediumErrors()
    var screen = SubscribeScreen(
      output: session.output, mediums: strategy.mediums, json: options.json, live: live,
      banner: banner)
    screen.start()
    var reason = "stopped"
    loop: for await step in SubscribeStep.merged(events: subscription.events, signals: signals) {
      switch step {
      case .event(.expired):
        reason = "the subscription's TTL ran out"
        break loop
      case .event(let event):
        screen.show(event)
      case .tick:
        screen.tick()
      case .stop(let why):
        reason = why
        break loop
      }
    }
    errors.cancel()
    web?.cancel()
    await web?.value
    await subscription.cancel()
    await session.shutdown()
    session.output.note("unsubscribed (\(reason))")
  }
}
