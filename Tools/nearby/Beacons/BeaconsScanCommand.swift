import CommandLineSupport
import ArgumentParser
import BLEBlueZ
import Core
import Foundation
import Tokens
import BeaconFrames

/// `nearby beacons scan`: the beacons heard now, live.
struct BeaconsScanCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scan",
    abstract: "Scan for BLE beacons (Eddystone, iBeacon, AltBeacon) and list them live.",
    discussion: """
      Scans with BlueZ and lists each beacon heard (address and advertised id): its kind, \
      its fields, the signal smoothed over 5 s (median) and the distance estimated from the \
      frame's declared power (log-distance path loss, ± the accuracy the signal's spread \
      gives). On a terminal the table is redrawn once a second; otherwise a line is printed \
      when a beacon is first heard and the table at the end. With --json, one object a line \
      for every frame heard: "kind" and every field as `nearby beacons parse --json` prints \
      them, plus "address", "rssi", "smoothedRSSI", "distance" and "accuracy" (metres; null \
      for telemetry frames, which declare no power).

      Runs for --seconds, or until interrupted (Ctrl-C, SIGTERM). --low-power asks for \
      passive scanning where the adapter offers advertisement monitors (BlueZ's \
      AdvertisementMonitorManager1), active LE discovery otherwise.
      """)

  @OptionGroup var options: BLEOptions

  @Option(help: "How long to scan, in seconds (default: until interrupted).")
  var seconds: Double?

  @Flag(help: "Scan passively where the adapter offers advertisement monitors.")
  var lowPower = false

  func validate() throws {
    if let seconds, !(seconds > 0 && seconds <= 86_400) {
      throw ValidationError("--seconds must be between 0 and 86400")
    }
  }

  enum Step {
    case sighting(BeaconSighting)
    case tick
    case stop
  }

  func run() async throws {
    let signals = SignalStream.make()
    let medium = try await options.medium(reportAll: false)
    do {
      try await requireReady(medium)
      try await medium.startBeaconScanning(lowPower: lowPower)
    } catch {
      await medium.shutdown()
      throw error
    }
    let live = !options.json && isatty(STDOUT_FILENO) == 1
    let (steps, step) = AsyncStream.makeStream(of: Step.self, bufferingPolicy: .unbounded)
    let sightings = medium.beaconSightings
    let tasks = [
      Task {
        for await sighting in sightings { step.yield(.sighting(sighting)) }
        step.yield(.stop)
      },
      Task {
        for await _ in signals { break }
        step.yield(.stop)
      },
      Task { [seconds] in
        guard let seconds else { return }
        try? await Task.sleep(for: .seconds(seconds))
        step.yield(.stop)
      },
      Task {
        while live, !Task.isCancelled {
          try? await Task.sleep(for: .seconds(1))
          step.yield(.tick)
        }
      },
    ]
    var table = BeaconTable()
    func write(_ text: String) { StandardStreams.output(text + "\n") }
    // Home, clear the screen, then the table.
    func draw() { write("\u{1B}[H\u{1B}[2J" + table.render()) }
    if live { draw() }
    loop: for await next in steps {
      switch next {
      case .sighting(let sighting):
        let (row, isNew) = table.add(sighting)
        if options.json {
          write(JSONLine.encode(row.record))
        } else if !live, isNew {
          write("found " + BeaconTable.line(row))
        }
      case .tick: draw()
      case .stop: break loop
      }
    }
    for task in tasks { task.cancel() }
    await medium.shutdown()
    if !options.json { live ? draw() : write(table.render()) }
  }
}

/// The beacons heard, one row per transmitter address and advertised id (or kind, for frames
/// without an id), each with its smoothed signal and distance.
struct BeaconTable {
  struct Row {
    var address: String
    var id: String
    var frame: BeaconFrame
    var rssi: Int?
    var smoother = RSSISmoother<ContinuousClock.Instant>(window: .seconds(5))
    var signal: SmoothedSignal?
    var distance: DistanceEstimate?
    var lastHeard: ContinuousClock.Instant

    /// The frame's fields (as `nearby beacons parse` has them) and the signal's.
    var record: BeaconRecord {
      var record = BeaconRecord(frame)
      record.fields += [
        ("address", .string(address)), ("rssi", rssi.map { .int($0) } ?? .null),
        ("smoothedRSSI", signal.map { .double($0.rssi) } ?? .null),
        ("distance", distance.map { .double($0.metres) } ?? .null),
        ("accuracy", distance.map { .double($0.accuracy) } ?? .null),
      ]
      return record
    }
  }

  private(set) var rows: [Row] = []
  let model = PathLossModel()

  /// Adds a sighting; returns its row and whether the beacon is new.
  mutating func add(_ sighting: BeaconSighting) -> (Row, isNew: Bool) {
    let id = BeaconID(frame: sighting.frame)?.description ?? sighting.frame.kind.rawValue
    var isNew = false
    let index: Int
    if let known = rows.firstIndex(where: { $0.address == sighting.address && $0.id == id }) {
      index = known
    } else {
      rows.append(
        Row(address: sighting.address, id: id, frame: sighting.frame, lastHeard: sighting.time))
      index = rows.count - 1
      isNew = true
    }
    var row = rows[index]
    row.frame = sighting.frame
    row.rssi = sighting.rssi
    row.lastHeard = sighting.time
    if let rssi = sighting.rssi {
      row.signal = row.smoother.add(rssi: rssi, at: sighting.time)
    }
    if let signal = row.signal, let reference = sighting.frame.referencePower {
      row.distance = model.distance(signal, reference: reference)
    }
    rows[index] = row
    return (row, isNew)
  }

  /// The table as text: a header and one line per beacon.
  func render(now: ContinuousClock.Instant = .now) -> String {
    var lines = [Self.columns("ADDRESS", "KIND", "RSSI", "DISTANCE", "SEEN", "FIELDS")]
    for row in rows { lines.append(Self.line(row, now: now)) }
    if rows.isEmpty { lines.append("(no beacons heard yet)") }
    return lines.joined(separator: "\n")
  }

  static func line(_ row: Row, now: ContinuousClock.Instant = .now) -> String {
    let record = BeaconRecord(row.frame)
    let seconds = (now - row.lastHeard) / .seconds(1)
    return columns(
      row.address, record.kind.rawValue,
      row.signal.map { String(format: "%.0f", $0.rssi) } ?? "-",
      row.distance.map { String(format: "%.1f±%.1fm", $0.metres, $0.accuracy) } ?? "-",
      LiveTable.age(seconds),
      record.fields.map { "\($0.name)=\($0.value)" }.joined(separator: " "))
  }

  private static func columns(_ values: String...) -> String {
    values.columns(widths: [18, 14, 5, 14, 6, 0])
  }
}
