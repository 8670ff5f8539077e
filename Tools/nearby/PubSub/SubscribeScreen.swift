import CommandLineSupport
import Core
import Foundation
import Strategy

/// How `nearby subscribe` shows events: a live table redrawn on a terminal, one line per
/// change otherwise, or one JSON object a line with --json.
struct SubscribeScreen {
  let output: EventOutput
  let mediums: DiscoveryMediums
  let json: Bool
  /// Whether stdout is a terminal that gets the live table.
  let live: Bool
  /// What the live table shows above itself.
  let banner: ScreenBanner
  private var table: LiveTable

  init(
    output: EventOutput, mediums: DiscoveryMediums, json: Bool, live: Bool,
    banner: ScreenBanner = ScreenBanner()
  ) {
    self.output = output
    self.mediums = mediums
    self.json = json
    self.live = live
    self.banner = banner
    self.table = LiveTable(mediums: mediums)
  }

  /// Draws the empty table on a terminal.
  func start() {
    if live { draw() }
  }

  /// Redraws the table (its "since" column moves) on a terminal.
  func tick() {
    if live { draw() }
  }

  /// Shows one event (an expiry is the caller's to handle).
  mutating func show(_ event: SubscriptionEvent) {
    switch event {
    case .found(let message):
      table.found(message)
      change("found", message)
    case .lost(let message):
      table.lost(message)
      change("lost", message)
    case .expired:
      break
    case .distanceChanged, .signalChanged:
      // Beacon attachments: distance and signal changes.
      table.update(event)
      if json { output.beaconUpdate(event) }
    }
  }

  private func change(_ name: String, _ message: Message) {
    if json {
      output.message(name, message, mediums: mediums)
    } else if live {
      draw()
    } else {
      write("\(name) \(EventOutput.preview(message)) type=\"\(message.type)\"")
    }
  }

  private func write(_ text: String) {
    StandardStreams.output(text + "\n")
  }

  /// Home, clear the screen, then the banner and the table.
  private func draw() {
    let banner = banner.current
    write("\u{1B}[H\u{1B}[2J" + (banner.isEmpty ? "" : banner + "\n\n") + table.render())
  }
}
