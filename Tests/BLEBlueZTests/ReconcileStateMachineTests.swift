import Core
import DBus
import Testing
import Tokens

@testable import BLEBlueZ

/// The reconcile decisions on facts: no bluetoothd, no double, no sleeping.
@Suite("Reconcile, decided on facts")
struct ReconcileStateMachineTests {
  typealias Machine = ReconcileStateMachine
  typealias Facts = ReconcileStateMachine.Facts

  static let usable = Facts(
    daemon: .present, adapter: .init(name: "hci0", powered: true, hasAdvertising: true))
  static let path = try! DBusObjectPath("/org/nearby/ble/advert1")

  func facts(_ change: (inout Facts) -> Void) -> Facts {
    var facts = Self.usable
    change(&facts)
    return facts
  }

  @Test("the problem: access refused, then no bluetoothd, no adapter, powered off")
  func problems() {
    let machine = Machine(configuration: .init(adapter: "hci7"))
    #expect(machine.problem(Self.usable) == nil)
    #expect(
      machine.problem(facts { $0.adapter?.powered = false }) == .poweredOff(BlueZFix.off("hci0")))
    #expect(
      machine.problem(facts { $0.adapter = nil }) == .poweredOff(BlueZFix.noAdapter("hci7")))
    #expect(
      machine.problem(
        facts {
          $0.daemon = .absent; $0.adapter = nil
        })
        == .bluetoothdUnavailable(BlueZFix.noDaemon))
    #expect(
      machine.problem(
        facts {
          $0.daemon = .refusedAccess
        })
        == .permissionDenied(BlueZFix.permission))
    #expect(
      Machine().problem(facts { $0.adapter = nil }) == .poweredOff(BlueZFix.noAdapter(nil)))
  }

  @Test("the status is told once per change, and never after the shutdown")
  func status() {
    var machine = Machine()
    #expect(machine.status == nil)
    #expect(machine.update(Self.usable) == .ready)
    #expect(machine.update(Self.usable) == nil)  // repeated: nothing new
    #expect(machine.update(facts { $0.adapter?.powered = false }) == .poweredOff)
    #expect(machine.update(facts { $0.adapter = nil }) == nil)  // still powered off
    #expect(
      machine.update(facts { $0.daemon = .refusedAccess })
        == .permissionDenied(BlueZFix.permission))
    #expect(
      machine.update(facts { $0.daemon = .absent })
        == .unavailable(BlueZMediumError.bluetoothdUnavailable(BlueZFix.noDaemon).description))
    #expect(machine.update(Self.usable) == .ready)
    #expect(machine.status == .ready)
    machine.shutDown()
    machine.shutDown()
    #expect(machine.update(facts { $0.adapter = nil }) == nil)
    #expect(machine.status == .ready)
  }

  @Test("the advert: register the wanted token, withdraw a stale one first, nothing when matching")
  func advertSteps() {
    let machine = Machine()
    let old = Token.random()
    let new = Token.random()
    #expect(machine.nextAdvertStep(advertised: nil, wanted: nil, facts: Self.usable) == nil)
    #expect(
      machine.nextAdvertStep(advertised: nil, wanted: new, facts: Self.usable) == .register(new))
    #expect(
      machine.nextAdvertStep(advertised: (Self.path, new), wanted: new, facts: Self.usable) == nil)
    // A rotation, or a stop: the old advert goes first, unregistered at BlueZ.
    #expect(
      machine.nextAdvertStep(advertised: (Self.path, old), wanted: new, facts: Self.usable)
        == .withdraw(Self.path, atBlueZ: true))
    #expect(
      machine.nextAdvertStep(advertised: (Self.path, old), wanted: nil, facts: Self.usable)
        == .withdraw(Self.path, atBlueZ: true))
  }

  @Test("an unusable adapter: the advert is let go without BlueZ, a wanted one cannot start")
  func advertOnAnUnusableAdapter() {
    let machine = Machine()
    let token = Token.random()
    let off = facts { $0.adapter?.powered = false }
    #expect(
      machine.nextAdvertStep(advertised: (Self.path, token), wanted: token, facts: off)
        == .withdraw(Self.path, atBlueZ: false))
    #expect(
      machine.nextAdvertStep(advertised: nil, wanted: token, facts: off)
        == .cannotAdvertise(.poweredOff(BlueZFix.off("hci0"))))
    #expect(machine.nextAdvertStep(advertised: nil, wanted: nil, facts: off) == nil)
    // An adapter without LEAdvertisingManager1.
    let mute = facts { $0.adapter?.hasAdvertising = false }
    #expect(
      machine.nextAdvertStep(advertised: nil, wanted: token, facts: mute)
        == .cannotAdvertise(
          .bluez(
            DBusError(.notSupported, "adapter hci0 cannot advertise (no LEAdvertisingManager1)"))))
  }

  @Test("NotReady is tried again with a doubling delay, at most 2 s, up to the retries")
  func retries() {
    let machine = Machine(configuration: .init(retries: 7, retryDelay: .milliseconds(100)))
    let delays = (0..<8).map {
      machine.retryDelay(after: .bluezNotReady, member: "RegisterAdvertisement", attempt: $0)
    }
    #expect(
      delays == [
        .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
        .milliseconds(1600), .seconds(2), .seconds(2), nil,
      ])
    // A first delay longer than the cap is kept; the next ones are capped.
    let slow = Machine(configuration: .init(retries: 2, retryDelay: .seconds(3)))
    #expect(slow.retryDelay(after: .bluezNotReady, member: "X", attempt: 0) == .seconds(3))
    #expect(slow.retryDelay(after: .bluezNotReady, member: "X", attempt: 1) == .seconds(2))
  }

  @Test(
    "InProgress is tried again except for StartDiscovery; other errors and a shut down medium not")
  func whatIsRetried() {
    var machine = Machine()
    #expect(
      machine.retryDelay(after: .bluezInProgress, member: "RegisterMonitor", attempt: 0) != nil)
    #expect(
      machine.retryDelay(after: .bluezInProgress, member: "StartDiscovery", attempt: 0) == nil)
    for name: DBusError.Name in [.bluezFailed, .bluezAlreadyExists, .accessDenied, .notSupported] {
      #expect(machine.retryDelay(after: name, member: "RegisterAdvertisement", attempt: 0) == nil)
    }
    #expect(
      Machine(configuration: .init(retries: 0)).retryDelay(
        after: .bluezNotReady, member: "X", attempt: 0) == nil)
    machine.shutDown()
    #expect(machine.retryDelay(after: .bluezNotReady, member: "X", attempt: 0) == nil)
  }
}
