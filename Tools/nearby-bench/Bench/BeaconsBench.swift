import CommandLineSupport
import ArgumentParser
import BeaconFrames

/// Beacon advertisements parsed per second on one core, from a mixed set (BeaconsWorkload).
struct BeaconsBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "beacons",
    abstract: "Beacon advertisements parsed per second on one core (mixed frame kinds).",
    discussion: """
      The set: --set payloads, evenly Eddystone UID, URL, TLM, encrypted TLM and EID, iBeacon, \
      AltBeacon, and one in eight that carries no beacon (a phone's Apple "nearby" data), each \
      with random identifiers. One thread parses the set over and over for --seconds per \
      round and path; every round reports payloads/s. Paths: advertisement-array (whole \
      advertising payloads into an array, BeaconFrame.frames(inAdvertisement:)), \
      advertisement-visit (the same without the array, BeaconFrame.forEach), bluez-entry (the \
      service-data or manufacturer-data entry as BlueZ reports it, keyed by UUID string or \
      company identifier).
      """)

  @Option(help: "Payloads in the set.")
  var set = 4_096

  @Option(help: "Rounds per path.")
  var rounds = 5

  @Option(help: "Seconds per round.")
  var seconds = 2.0

  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: one round of 0.2 s per \
      path (replaces --rounds and --seconds).
      """)
  var short = false

  @Flag(help: "Print the results as one JSON object.")
  var json = false

  struct PathResult: Encodable {
    var path: BeaconsWorkload.Path
    var rounds: [Double]
    var medianPerSecond: Double
    var minPerSecond: Double
    var maxPerSecond: Double
  }

  struct Output: Encodable {
    var payloads: Int
    var beaconsPerSet: Int
    var paths: [PathResult]
  }

  func validate() throws {
    guard set > 0, rounds > 0, seconds > 0 else {
      throw ValidationError("--set, --rounds and --seconds must be > 0")
    }
  }

  func run() throws {
    let rounds = short ? 1 : self.rounds
    let seconds = short ? 0.2 : self.seconds
    var generator = SystemRandomNumberGenerator()
    let workload = BeaconsWorkload(count: set, using: &generator)
    let beacons = workload.run(.frames)
    guard beacons >= 0 else { throw CommandFailure("a payload of the set failed to parse") }
    var results: [PathResult] = []
    for path in BeaconsWorkload.Path.allCases {
      var rates: [Double] = []
      for _ in 0..<rounds {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .seconds(seconds)
        var payloads = 0
        repeat {
          guard workload.run(path) == beacons else {
            throw CommandFailure("\(path.rawValue) found a different number of beacons")
          }
          payloads += set
        } while clock.now < deadline
        let elapsed = start.duration(to: clock.now)
        rates.append(Double(payloads) / elapsed.seconds)
      }
      let sorted = rates.sorted()
      results.append(
        PathResult(
          path: path, rounds: rates, medianPerSecond: sorted[sorted.count / 2],
          minPerSecond: sorted[0], maxPerSecond: sorted[sorted.count - 1]))
    }
    if json {
      print(JSONLine.encode(Output(payloads: set, beaconsPerSet: beacons, paths: results)))
      return
    }
    print(
      "beacon payloads parsed per second, one thread, \(set) mixed payloads, \(beacons) beacons:")
    for result in results {
      print(
        "  \(result.path.rawValue): median \(Int(result.medianPerSecond)) /s "
          + "(min \(Int(result.minPerSecond)), max \(Int(result.maxPerSecond)))")
    }
  }
}
