import Core
import DBus
import Tokens
import BeaconFrames

/// What the medium keeps of a BlueZ adapter.
struct AdapterState: Sendable {
  var path: DBusObjectPath
  var name: String
  var powered: Bool
  var hasAdvertising: Bool
  var supportedInstances: Int?
  var activeInstances: Int?
  /// AdvertisementMonitorManager1's monitor types (empty when the adapter has none).
  var monitorTypes: [String]

  init(path: DBusObjectPath, interfaces: [String: [String: DBusValue]]) {
    self.path = path
    name = String(path.rawValue.split(separator: "/").last ?? "")
    let adapter = interfaces["org.bluez.Adapter1"] ?? [:]
    powered = adapter["Powered"]?.bool ?? false
    let advertising = interfaces["org.bluez.LEAdvertisingManager1"]
    hasAdvertising = advertising != nil
    supportedInstances = advertising?["SupportedInstances"]?.integer.map(Int.init)
    activeInstances = advertising?["ActiveInstances"]?.integer.map(Int.init)
    monitorTypes =
      interfaces["org.bluez.AdvertisementMonitorManager1"]?["SupportedMonitorTypes"]?.elements?
      .compactMap(\.string) ?? []
  }

  /// Whether scanning can use a passive "or_patterns" monitor instead of discovery.
  var canMonitor: Bool { monitorTypes.contains("or_patterns") }
}

/// What the medium keeps of a BlueZ device: enough to make a sighting from a
/// `PropertiesChanged` that carries only some of the fields.
struct DeviceState: Sendable, Equatable {
  var adapter: DBusObjectPath?
  var address: String?
  /// Whether the address is a random one (`AddressType` "random"), else public.
  var randomAddress = false
  var rssi: Int16?
  var txPower: Int16?
  var serviceData: [String: [UInt8]] = [:]
  var manufacturerData: [UInt16: [UInt8]] = [:]
  /// When the last advertising report (RSSI or data) arrived: made at, until one does.
  var lastData: NearbyClock.Instant
  /// Whether bluetoothd holds an advertising report of the device: set by a report (its RSSI,
  /// even "unknown", or data), cleared when bluetoothd invalidates the RSSI (it does when
  /// discovery stops, before removing the device: docs/bluez-vm-findings.md item 11).
  var heard = false
  /// Whether bluetoothd keeps the device for good (paired, bonded, trusted or connected)
  /// instead of removing it once unheard for its `TemporaryTimeout`.
  var isKept: Bool { paired || bonded || trusted || connected }
  var paired = false
  var bonded = false
  var trusted = false
  var connected = false

  /// A device first seen at `now`, with nothing known of it yet.
  init(at now: NearbyClock.Instant) { lastData = now }

  /// The RSSI a controller reports when it has none.
  static let unknownRSSI = 127

  /// Whether the device was heard by `adapter` (the one the medium uses; none: no).
  func isOn(adapter: DBusObjectPath?, at path: DBusObjectPath) -> Bool {
    guard let adapter else { return false }
    return self.adapter == adapter || path.isDescendant(of: adapter)
  }

  /// Applies Device1 properties that arrived at `now`; returns whether they carry an
  /// advertising report (RSSI or data), which sets ``lastData`` to `now`.
  mutating func apply(_ properties: [String: DBusValue], at now: NearbyClock.Instant) -> Bool {
    var report = false
    if let adapter = properties["Adapter"]?.objectPath { self.adapter = adapter }
    if let address = properties["Address"]?.string { self.address = address }
    if let type = properties["AddressType"]?.string { randomAddress = type == "random" }
    if let value = properties["Paired"]?.bool { paired = value }
    if let value = properties["Bonded"]?.bool { bonded = value }
    if let value = properties["Trusted"]?.bool { trusted = value }
    if let value = properties["Connected"]?.bool { connected = value }
    if let rssi = properties["RSSI"]?.integer {
      // 127 is HCI's "RSSI not available" (Core spec, LE Advertising Report), which real
      // bluetoothd passes on as it is (its emulated controllers always report it): the
      // advertisement was heard, its strength is unknown, not 127 dBm.
      self.rssi = rssi == Self.unknownRSSI ? nil : Int16(clamping: rssi)
      report = true
    }
    if let tx = properties["TxPower"]?.integer { txPower = Int16(clamping: tx) }
    if let data = properties["ServiceData"]?.stringDictionary {
      serviceData = [:]
      for (uuid, value) in data {
        if let bytes = value.bytes { serviceData[uuid.lowercased()] = bytes }
      }
      report = true
    }
    if let data = properties["ManufacturerData"]?.integerDictionary {
      manufacturerData = [:]
      for (id, value) in data {
        if let bytes = value.bytes, let key = UInt16(exactly: id) { manufacturerData[key] = bytes }
      }
      report = true
    }
    if report {
      lastData = now
      heard = true
    }
    return report
  }

  /// Forgets the properties bluetoothd invalidated (the third argument of
  /// `PropertiesChanged`): an invalidated RSSI becomes unknown, not the last value, and the
  /// device no longer counts as heard (bluetoothd does it when discovery stops, item 11).
  mutating func invalidate(_ names: [String]) {
    for name in names {
      switch name {
      case "RSSI":
        rssi = nil
        heard = false
      case "TxPower": txPower = nil
      case "ServiceData": serviceData = [:]
      case "ManufacturerData": manufacturerData = [:]
      default: break
      }
    }
  }

  /// Our token frame, when the device's service data carries one.
  var frame: BLETokenFrame? {
    guard let payload = serviceData[BLETokenFrame.serviceUUID] else { return nil }
    return try? BLETokenFrame(payload: payload)
  }

  /// Every beacon frame in the device's last service and manufacturer data (entries in key
  /// order); a malformed entry is skipped and passed to `malformed`.
  func beaconFrames(malformed: (String, BeaconFrameError) -> Void) -> [BeaconFrame] {
    var frames: [BeaconFrame] = []
    for (uuid, data) in serviceData.sorted(by: { $0.key < $1.key })
    where uuid != BLETokenFrame.serviceUUID {
      do throws(BeaconFrameError) {
        if let frame = try BeaconFrame.parse(serviceData: data, uuid: uuid) { frames.append(frame) }
      } catch {
        malformed("service data \(uuid)", error)
      }
    }
    for (companyID, data) in manufacturerData.sorted(by: { $0.key < $1.key }) {
      do throws(BeaconFrameError) {
        if let frame = try BeaconFrame.parse(manufacturerData: data, companyID: companyID) {
          frames.append(frame)
        }
      } catch {
        malformed("manufacturer data 0x\(String(companyID, radix: 16))", error)
      }
    }
    return frames
  }
}

/// The advertisement object we export for `LEAdvertisingManager1.RegisterAdvertisement`.
/// ``BlueZEngine/applyAdvert(throwing:)`` exports it before it registers it, always: real
/// bluetoothd never answers the registration of an object it cannot read
/// (docs/bluez-vm-findings.md item 15), the call would only end with our `callTimeout`.
struct AdvertObject: Sendable {
  static let legacyLimit = 31

  var frame: BLETokenFrame
  var localName: String?
  /// A "peripheral" advert (connectable; bluetoothd adds the Flags structure) instead of a
  /// "broadcast" one.
  var connectable = false

  /// The legacy advertising bytes BlueZ will build for a broadcast advertisement: our
  /// service-data AD structure (28 bytes) and, if set, the local name's.
  var legacyLength: Int {
    frame.adStructure.count + (localName.map { 2 + $0.utf8.count } ?? 0) + (connectable ? 3 : 0)
  }

  func interface(onRelease: @escaping @Sendable () async -> Void) -> DBusInterface {
    var properties = [
      DBusProperty("Type", .string(connectable ? "peripheral" : "broadcast")),
      DBusProperty("ServiceData", .vardict([BLETokenFrame.serviceUUID: .bytes(frame.payload)])),
      DBusProperty("Includes", .strings([])),
      DBusProperty("Discoverable", .boolean(false)),
    ]
    if let localName { properties.append(DBusProperty("LocalName", .string(localName))) }
    return DBusInterface(
      "org.bluez.LEAdvertisement1",
      methods: [
        DBusMethod("Release") { _ in
          await onRelease()
          return []
        }
      ], properties: properties)
  }
}

/// What a pattern monitor asks BlueZ for: our token frames, beacon frames, or both.
struct MonitorPatterns: OptionSet, Sendable, Hashable {
  let rawValue: UInt8

  /// Our service data: AD type 0x21 starting with our UUID (little-endian).
  static let tokens = MonitorPatterns(rawValue: 1 << 0)
  /// Eddystone (AD 0x16 starting AA FE), iBeacon (AD 0xFF starting 4C 00 02 15) and
  /// AltBeacon (AD 0xFF with BE AC after the company identifier).
  static let beacons = MonitorPatterns(rawValue: 1 << 1)

  /// The `(start, AD type, content)` patterns, as `AdvertisementMonitor1.Patterns` has them.
  var patterns: [(start: UInt8, adType: UInt8, content: [UInt8])] {
    var out: [(start: UInt8, adType: UInt8, content: [UInt8])] = []
    if contains(.tokens) {
      out.append((0, BLETokenFrame.serviceData128ADType, BLETokenFrame.serviceUUIDLittleEndian))
    }
    if contains(.beacons) {
      let eddystone = Eddystone.serviceUUID
      out.append((0, 0x16, [UInt8(eddystone & 0xff), UInt8(eddystone >> 8)]))
      out.append(
        (
          0, 0xff,
          [UInt8(IBeacon.companyID & 0xff), UInt8(IBeacon.companyID >> 8)] + IBeacon.prefix
        ))
      out.append((2, 0xff, [UInt8(AltBeacon.beaconCode >> 8), UInt8(AltBeacon.beaconCode & 0xff)]))
    }
    return out
  }
}

/// The `org.bluez.AdvertisementMonitor1` object that asks BlueZ for adverts matching
/// ``MonitorPatterns`` (our service data, beacons): passive, low-power scanning where the
/// adapter offers AdvertisementMonitorManager1.
enum MonitorObject {
  static func interface(
    _ patterns: MonitorPatterns, onRelease: @escaping @Sendable () async -> Void,
    onDeviceFound: @escaping @Sendable (DBusObjectPath) async -> Void = { _ in },
    onDeviceLost: @escaping @Sendable (DBusObjectPath) async -> Void = { _ in }
  ) -> DBusInterface {
    DBusInterface(
      "org.bluez.AdvertisementMonitor1",
      methods: [
        DBusMethod("Release") { _ in
          await onRelease()
          return []
        },
        DBusMethod("Activate") { _ in [] },
        DBusMethod("DeviceFound", input: "o") { call in
          if let path = call.body.first?.objectPath { await onDeviceFound(path) }
          return []
        },
        DBusMethod("DeviceLost", input: "o") { call in
          if let path = call.body.first?.objectPath { await onDeviceLost(path) }
          return []
        },
      ],
      properties: [
        DBusProperty("Type", .string("or_patterns")),
        // No RSSI setting at all (RSSIHigh/LowThreshold, RSSIHigh/LowTimeout,
        // RSSISamplingPeriod): bluetoothd 5.66 then calls DeviceFound for every advertising
        // report that matches, and never DeviceLost. With any of them set it tracks the RSSI
        // instead and calls DeviceFound only once a device's reports have spanned
        // RSSIHighTimeout (at least 1 s): a controller that reports an unchanged advert once
        // per scan start (btvirt; real ones on kernels that filter duplicates under a
        // monitor) never gets there, so a still peer was never found by the monitor and was
        // lost after lostAfter (docs/bluez-vm-findings.md item F). The medium times presence
        // itself from these calls (BlueZEngine+Presence.swift).
        DBusProperty(
          "Patterns",
          .array(
            .structure([.byte, .byte, .array(.byte)]),
            patterns.patterns.map {
              .structure([.byte($0.start), .byte($0.adType), .bytes($0.content)])
            })),
      ])
  }
}
