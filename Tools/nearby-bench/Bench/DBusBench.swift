import CommandLineSupport
import ArgumentParser
@_spi(Benchmarks) import DBus
import Foundation
import Tokens
import BeaconFrames

/// D-Bus decoding speed: a BlueZ `PropertiesChanged` carrying our BLE token frame as service
/// data, decoded from its wire bytes into typed values; and the same signals through a private
/// bus from one connection to another.
struct DBusBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "dbus",
    abstract: "Decoded PropertiesChanged messages/s on one core, and bus throughput/latency.",
    discussion: """
      decode: the wire bytes of org.freedesktop.DBus.Properties.PropertiesChanged \
      ("org.bluez.Device1", {RSSI: n, TxPower: n, ServiceData: {uuid: ay[10]}}, []) are \
      decoded by libdbus (validation included) and turned into DBusValues, then RSSI and the \
      service data bytes are read out: the work done for each BlueZ signal. One thread.
      bus: one connection emits the same signals to another through a private dbus-daemon \
      (started here); messages/s and the emit→stream latency at a paced rate.
      """)

  @Option(help: "Messages decoded in each round of the decode phase.")
  var messages = 500_000

  @Option(help: "Rounds of the decode phase.")
  var rounds = 5

  @Option(help: "Signals in each bus phase (0 skips the bus phases).")
  var signals = 20_000

  @Option(help: "Signals per second in the paced bus phase.")
  var rate = 2_000

  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: one decode round of \
      20 000 messages, 1 000 signals in each bus phase (replaces --messages, --rounds and \
      --signals; --signals 0 still skips the bus).
      """)
  var short = false

  @Flag(help: "Print the results as one JSON object.")
  var json = false

  struct Results: Encodable {
    var decodeMessagesPerSecond: [Double]
    var decodeNanosecondsPerMessage: Double
    var decodeMessagesPerCPUSecond: [Double]
    var wireMessagesPerSecond: [Double]
    var messageBytes: Int
    var busBurstMessagesPerSecond: Double?
    var busPacedP50Microseconds: Double?
    var busPacedP99Microseconds: Double?
    var busPacedMaxMicroseconds: Double?
  }

  static let devicePath = try! DBusObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01")

  static func propertiesChanged(sequence: UInt32, rssi: Int16) -> DBusMessage {
    let frame = BLETokenFrame(token: Token(value: 0x0102_0304_0506_0708), txPower: -12)
    return .signal(
      path: devicePath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
      body: [
        .string("org.bluez.Device1"),
        .vardict([
          "RSSI": .int16(rssi), "TxPower": .int16(4),
          "ServiceData": .vardict([BLETokenFrame.serviceUUID: .bytes(frame.payload)]),
          "ManufacturerData": .dictionary(
            key: .uint16, value: .variant,
            [
              DBusDictEntry(
                .uint16(0xffff),
                .variant(.bytes(withUnsafeBytes(of: sequence.bigEndian, Array.init))))
            ]),
        ]),
        .strings([]),
      ])
  }

  /// What the BlueZ medium reads out of a signal: RSSI and our service data.
  static func readOut(_ message: DBusMessage) throws -> (rssi: Int64, payload: [UInt8]) {
    let body = try message.arguments("sa{sv}as")
    guard let changed = body[1].stringDictionary, let rssi = changed["RSSI"]?.integer,
      let payload = changed["ServiceData"]?.stringDictionary?[BLETokenFrame.serviceUUID]?.bytes
    else { throw BenchError("the signal lost its RSSI or service data") }
    return (rssi, payload)
  }

  /// Messages decoded in each round: 20 000 in a short run.
  var messageCount: Int { short ? 20_000 : messages }
  /// Rounds of the decode phase: one in a short run.
  var roundCount: Int { short ? 1 : rounds }
  /// Signals in each bus phase: 1 000 in a short run (none when --signals is 0).
  var signalCount: Int { short && signals > 0 ? 1_000 : signals }

  func run() async throws {
    let messages = messageCount
    let rounds = roundCount
    var message = Self.propertiesChanged(sequence: 1, rssi: -60)
    message.serial = 1
    message.sender = ":1.7"
    let bytes = try message.serialized()
    var rates: [Double] = []
    var wireRates: [Double] = []
    var cpuRates: [Double] = []
    var checksum: Int64 = 0
    for round in 1...rounds {
      progress("decode round \(round)/\(rounds): \(messages) messages")
      var start = ContinuousClock.now
      let cpuStart = threadCPUSeconds()
      try DBusMessage.decodeRepeatedly(serialized: bytes, times: messages) { decoded in
        let (rssi, payload) = try Self.readOut(decoded)
        checksum &+= rssi &+ Int64(payload.count)
      }
      cpuRates.append(Double(messages) / (threadCPUSeconds() - cpuStart))
      rates.append(Double(messages) / ((ContinuousClock.now - start) / .seconds(1)))
      start = ContinuousClock.now
      for _ in 0..<messages {
        let decoded = try DBusMessage(serialized: bytes)
        let (rssi, payload) = try Self.readOut(decoded)
        checksum &+= rssi &+ Int64(payload.count)
      }
      wireRates.append(Double(messages) / ((ContinuousClock.now - start) / .seconds(1)))
    }
    guard checksum == Int64(rounds * messages * 2) * (-60 + 10) else {
      throw BenchError("decoding gave wrong values")
    }
    let sorted = rates.sorted()
    var results = Results(
      decodeMessagesPerSecond: rates, decodeNanosecondsPerMessage: 1e9 / sorted[sorted.count / 2],
      decodeMessagesPerCPUSecond: cpuRates, wireMessagesPerSecond: wireRates,
      messageBytes: bytes.count)
    if signalCount > 0 { try await runBus(into: &results) }
    report(results)
  }

  private func runBus(into results: inout Results) async throws {
    let signals = signalCount
    let bus = try PrivateBus()
    defer { bus.stop() }
    let sender = try await DBusConnection(.address(bus.address))
    let receiver = try await DBusConnection(.address(bus.address))
    defer {
      sender.close()
      receiver.close()
    }
    let stream = try await receiver.signals(
      matching: DBusMatchRule(
        sender: sender.uniqueName, interface: "org.freedesktop.DBus.Properties",
        member: "PropertiesChanged", arguments: [0: "org.bluez.Device1"]),
      bufferingPolicy: .unbounded)
    let total = signals * 2
    let times = SendTimes(count: total)
    let reader = Task { () -> Int in
      var received = 0
      for await signal in stream {
        let now = ContinuousClock.now
        guard (try? Self.readOut(signal)) != nil,
          let bytes = signal.body[1].stringDictionary?["ManufacturerData"]?.integerDictionary?[
            0xffff]?.bytes, bytes.count == 4
        else { continue }
        times.received(Int(bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }), at: now)
        received += 1
        if received == total { break }
      }
      return received
    }
    let burst = (0..<signals).map { Self.propertiesChanged(sequence: UInt32($0), rssi: -60) }
    progress("bus burst: \(signals) signals")
    let burstStart = ContinuousClock.now
    for (index, signal) in burst.enumerated() {
      times.sent(index, at: .now)
      try sender.emit(signal)
    }
    try await waitUntil { times.receivedCount >= signals }
    progress("bus paced: \(signals) signals at \(rate)/s")
    let interval = Duration.seconds(1) / rate
    var next = ContinuousClock.now
    for index in signals..<total {
      next += interval
      while ContinuousClock.now < next { await Task.yield() }
      let signal = Self.propertiesChanged(sequence: UInt32(index), rssi: -60)
      times.sent(index, at: .now)
      try sender.emit(signal)
    }
    try await waitUntil { times.receivedCount >= total }
    reader.cancel()
    let (latencies, lastBurstArrival) = times.results(burst: signals)
    let burstSeconds = (lastBurstArrival - burstStart) / .seconds(1)
    results.busBurstMessagesPerSecond = Double(signals) / burstSeconds
    let paced = latencies[signals...].sorted()
    results.busPacedP50Microseconds = paced[paced.count / 2]
    results.busPacedP99Microseconds = paced[min(paced.count - 1, paced.count * 99 / 100)]
    results.busPacedMaxMicroseconds = paced.last
  }

  private func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
      guard ContinuousClock.now < deadline else {
        throw BenchError("signals did not all arrive within 60 s")
      }
      try await Task.sleep(for: .milliseconds(1))
    }
  }

  private func report(_ results: Results) {
    if json {
      print(JSONLine.encode(results))
      return
    }
    let sorted = results.decodeMessagesPerSecond.sorted()
    print("PropertiesChanged with service data: \(results.messageBytes) bytes on the wire")
    print(
      String(
        format:
          "decode (libdbus-parsed message → typed values → RSSI, service data): median %.0f messages/s (min %.0f, max %.0f) = %.0f ns/message, one thread",
        sorted[sorted.count / 2], sorted.first ?? 0, sorted.last ?? 0,
        results.decodeNanosecondsPerMessage))
    let cpu = results.decodeMessagesPerCPUSecond.sorted()
    print(
      String(
        format:
          "decode per CPU second of the decoding thread: median %.0f messages/s (min %.0f, max %.0f)",
        cpu[cpu.count / 2], cpu.first ?? 0, cpu.last ?? 0))
    let wire = results.wireMessagesPerSecond.sorted()
    print(
      String(
        format: "from wire bytes (libdbus demarshal per message + decode): median %.0f messages/s",
        wire[wire.count / 2]))
    if let burst = results.busBurstMessagesPerSecond, let p50 = results.busPacedP50Microseconds,
      let p99 = results.busPacedP99Microseconds, let max = results.busPacedMaxMicroseconds
    {
      print(String(format: "bus burst: %.0f signals/s emit→stream through dbus-daemon", burst))
      print(
        String(
          format: "bus paced at %d/s: emit→stream latency p50 %.1f µs, p99 %.1f µs, max %.1f µs",
          rate, p50, p99, max))
    }
  }

  private func progress(_ text: String) {
    StandardStreams.error("bench: \(text)\n")
  }
}

/// CPU time used by the calling thread, in seconds (not wall time: other processes on a busy
/// machine do not count).
func threadCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
