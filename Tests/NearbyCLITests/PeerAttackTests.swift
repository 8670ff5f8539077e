import Foundation
import TestSupport
import Testing
import NearbyTesting

extension MultiHostTests.Peer {
  /// A keyless attacker in c (it holds no project key): it captures the LAN announcements it
  /// hears and sends each again, and forges unkeyed announcements naming a way back of its
  /// choosing, of every token it could read in what it captured (else random ones), about
  /// `rate` datagrams a second for `seconds` (Python: any distro). Arguments: group, medium
  /// port, the way back's port, rate, seconds.
  static let forger = """
    import hashlib, os, socket, struct, sys, time
    group, port, back = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rate, seconds = float(sys.argv[4]), float(sys.argv[5])
    me = socket.inet_aton('10.80.0.4')
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    rx.bind((group, port))
    rx.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(group) + me)
    rx.setblocking(False)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, me)
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    captured, tokens, sent, end = [], [], 0, time.time() + seconds
    while time.time() < end:
        try:
            while True:
                data, _ = rx.recvfrom(2048)
                captured = (captured + [data])[-16:]
                if len(data) == 40 and data[8:16] not in tokens:
                    tokens = (tokens + [data[8:16]])[-4:]
        except BlockingIOError:
            pass
        token = tokens[sent % len(tokens)] if tokens else os.urandom(8)
        head = b'NBYL' + bytes([2, 0]) + struct.pack('>H', back) + token
        head += struct.pack('>Q', int(time.time() * 1000)) + os.urandom(4) + struct.pack('>I', 1)
        tx.sendto(head + hashlib.sha256(head).digest()[:8], (group, port))
        sent += 1
        if captured:
            tx.sendto(captured[sent % len(captured)], (group, port))
            sent += 1
        if sent == 1:
            print('flooding', flush=True)
        time.sleep(2 / rate)
    print(sent)
    """

  /// The victim: a UDP socket in c on `port` that counts what reaches it for `seconds`, then
  /// prints `datagrams bytes`.
  static let victim = """
    import socket, sys, time
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('0.0.0.0', int(sys.argv[1])))
    s.settimeout(0.2)
    print('listening', flush=True)
    count, size, end = 0, 0, time.time() + float(sys.argv[2])
    while time.time() < end:
        try:
            data, _ = s.recvfrom(70000)
            count, size = count + 1, size + len(data)
        except socket.timeout:
            pass
    print(count, size)
    """

  /// `python3 -c script arguments` in c.
  static func python(_ world: World, _ script: String, _ arguments: [String]) throws -> CLIProcess {
    try CLIProcess(
      ["netns", "exec", "\(world.prefix)-c", "python3", "-c", script] + arguments,
      environment: ProcessInfo.processInfo.environment, executable: MultiHostTests.ip)
  }

  /// Issue 39: one forged 40-byte announcement naming a victim's address brought it sealed
  /// queries from every host (×153); a keyed project's devices now drop what no key holder
  /// made, and a way back nobody vouched for gets a probe, never a query.
  @Test(.requires(.networkNamespaces))
  func aKeylessForgerCannotAimTheSegmentAtAVictim() async throws {
    let world = try World()
    defer { world.remove() }
    let victimPort = String(Int.random(in: 20_000...29_999))
    let publisher = try world.nearby(in: "a", ["publish", "hello"])
    let subscriber = try world.nearby(in: "b", ["subscribe"])
    defer {
      for process in [publisher, subscriber] { process.kill() }
    }
    #expect(
      await subscriber.waitForEvent(timeout: .seconds(30), Self.isFound("hello")) != nil,
      "\(subscriber.errors) \(publisher.errors)")
    // The victim listens from before the flood to 4 s after it.
    let victim = try Self.python(world, Self.victim, [victimPort, "12"])
    defer { victim.kill() }
    #expect(await victim.until { victim.lines.contains("listening") }, "\(victim.errors)")
    let forger = try Self.python(
      world, Self.forger, ["239.255.77.77", world.lanPort, victimPort, "1000", "8"])
    defer { forger.kill() }
    #expect(await forger.exitStatus() == 0, "\(forger.errors)")
    #expect(await victim.exitStatus() == 0, "\(victim.errors)")
    _ = await victim.waitUntilDrained(timeout: .seconds(5))
    let sent = Int(forger.lines.last ?? "") ?? 0
    #expect(sent >= 2_000, "the forger sent \(sent) datagrams: \(forger.errors)")
    #expect(victim.lines.last == "0 0", "the victim received \(victim.lines)")
    // Still found, never lost, through the flood.
    #expect(Self.count("lost", "hello", in: subscriber) == 0, "\(subscriber.lines)")
    await Self.interrupt([publisher, subscriber])
  }

  /// An attacker announcing a real owner's token with its own address at 1 000/s must not
  /// keep a listening newcomer from finding: without the key it can only replay what it
  /// captured and forge what no keyed device accepts, so the newcomer finds while the flood
  /// goes on. The forger floods until it is killed (120 s at most), so "during the flood"
  /// holds however slowly this machine runs; how fast the newcomer finds is a speed, kept
  /// out of the verdict (a loaded machine would change it).
  @Test(.requires(.networkNamespaces))
  func aListeningNewcomerFindsDuringAForgersFlood() async throws {
    let world = try World()
    defer { world.remove() }
    let publisher = try world.nearby(in: "a", ["publish", "hello", "--mode", "broadcast"])
    defer { publisher.kill() }
    #expect(
      await publisher.waitForEvent(timeout: .seconds(30)) {
        ($0["detail"] as? String)?.hasPrefix("connected to peers") == true
      } != nil, "\(publisher.errors)")
    // The forger's way back: a port of c's where nothing listens.
    let forger = try Self.python(
      world, Self.forger, ["239.255.77.77", world.lanPort, "29999", "1000", "120"])
    defer { forger.kill() }
    #expect(await forger.until { forger.lines.contains("flooding") }, "\(forger.errors)")
    let newcomer = try world.nearby(in: "b", ["subscribe", "--mode", "scan"])
    defer { newcomer.kill() }
    let connected = await newcomer.waitForEvent(timeout: .seconds(30)) {
      ($0["detail"] as? String)?.hasPrefix("connected to peers") == true
    }
    #expect(connected != nil, "\(newcomer.errors)")
    let found = await newcomer.waitForEvent(timeout: .seconds(60), Self.isFound("hello"))
    #expect(found != nil, "not found during the flood: \(newcomer.lines)")
    // The flood had not ended (nor the forger failed) when the newcomer found.
    #expect(await forger.exitStatus(timeout: .zero) == nil, "\(forger.lines) \(forger.errors)")
    #expect(Self.count("lost", "hello", in: newcomer) == 0, "\(newcomer.lines)")
    await Self.interrupt([newcomer, publisher])
    forger.kill()
  }
}
