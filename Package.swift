// swift-tools-version: 6.1
import PackageDescription

// Targets by layer: libraries (Modules/), medium plugins (Plugins/), executables (Tools/), test
// support (Tests/), tests (Tests/<Target>). Apps depend on the products by name and by version
// (Examples/NearbyExample): never rename one, and no `unsafeFlags` anywhere.

/// The settings of every target of ours but ResolverAPI (generated code).
let strictSwift: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The library products, each made of the one target of the same name. ServerResolver is the
/// old name of ResolverClient, kept for one minor version so that apps by version still build.
let libraryProducts = [
  "Strategy", "Tokens", "BeaconFrames", "Core", "Resolution", "PeerResolution", "MediumTestKit",
  "NearbyTesting",
  "ServerStorage",
  "ResolverClient", "ServerResolver", "NearbyServer", "DBus", "BLEBlueZ", "AudioModem",
  "AudioPulse",
  "PermissionStore", "BackgroundPersistence", "LANMulticast", "DesktopNotifications",
]

/// A product of one of our package dependencies.
func product(_ name: String, in package: String) -> Target.Dependency {
  .product(name: name, package: package)
}

// The products of our dependencies that targets use, each named once.
let logging = product("Logging", in: "swift-log")
let inMemoryLogging = product("InMemoryLogging", in: "swift-log")
let argumentParser = product("ArgumentParser", in: "swift-argument-parser")
let dequeModule = product("DequeModule", in: "swift-collections")
let heapModule = product("HeapModule", in: "swift-collections")
let asyncAlgorithms = product("AsyncAlgorithms", in: "swift-async-algorithms")
let crypto = product("Crypto", in: "swift-crypto")
let cryptoExtras = product("CryptoExtras", in: "swift-crypto")
let nioCore = product("NIOCore", in: "swift-nio")
let nioPosix = product("NIOPosix", in: "swift-nio")
let nioHTTP1 = product("NIOHTTP1", in: "swift-nio")
let nioSSL = product("NIOSSL", in: "swift-nio-ssl")
let nioHTTPTypes = product("NIOHTTPTypes", in: "swift-nio-extras")
let httpTypes = product("HTTPTypes", in: "swift-http-types")
let asyncHTTPClient = product("AsyncHTTPClient", in: "async-http-client")
let grdb = product("GRDB", in: "GRDB.swift")
let postgresNIO = product("PostgresNIO", in: "postgres-nio")
let openAPIRuntime = product("OpenAPIRuntime", in: "swift-openapi-runtime")
let openAPIAsyncHTTPClient = product(
  "OpenAPIAsyncHTTPClient", in: "swift-openapi-async-http-client")
let hummingbird = product("Hummingbird", in: "hummingbird")
let hummingbirdCore = product("HummingbirdCore", in: "hummingbird")
let hummingbirdTLS = product("HummingbirdTLS", in: "hummingbird")
let openAPIHummingbird = product("OpenAPIHummingbird", in: "swift-openapi-hummingbird")
let serviceLifecycle = product("ServiceLifecycle", in: "swift-service-lifecycle")
let unixSignals = product("UnixSignals", in: "swift-service-lifecycle")
let metrics = product("Metrics", in: "swift-metrics")
let prometheus = product("Prometheus", in: "swift-prometheus")
let mustache = product("Mustache", in: "swift-mustache")
let yams = product("Yams", in: "Yams")

/// A library target under Modules/<name> (or `path`), with the shared settings.
func library(_ name: String, dependsOn dependencies: Target.Dependency..., path: String? = nil)
  -> Target
{
  .target(
    name: name, dependencies: dependencies, path: path ?? "Modules/\(name)",
    swiftSettings: strictSwift)
}

/// A medium plugin: a library target under Plugins/<name>, with the shared settings.
func plugin(_ name: String, dependsOn dependencies: Target.Dependency...) -> Target {
  .target(
    name: name, dependencies: dependencies, path: "Plugins/\(name)", swiftSettings: strictSwift)
}

/// A C library from the system, under Modules/<name>, found with pkg-config.
func systemLibrary(_ name: String, pkgConfig: String?, apt package: String) -> Target {
  .systemLibrary(
    name: name, path: "Modules/\(name)", pkgConfig: pkgConfig, providers: [.apt([package])])
}

/// An executable target under Tools/<name> (or `path`), with the shared settings.
func executable(_ name: String, dependsOn dependencies: Target.Dependency..., path: String? = nil)
  -> Target
{
  .executableTarget(
    name: name, dependencies: dependencies, path: path ?? "Tools/\(name)",
    swiftSettings: strictSwift)
}

/// A Swift Testing target under Tests/<name>, with the shared settings.
func tests(_ name: String, dependsOn dependencies: Target.Dependency..., path: String? = nil)
  -> Target
{
  .testTarget(name: name, dependencies: dependencies, path: path, swiftSettings: strictSwift)
}

let package = Package(
  name: "nearby-linux",
  platforms: [.macOS(.v15)],
  products: libraryProducts.map { .library(name: $0, targets: [$0]) } + [
    .executable(name: "nearby", targets: ["nearby"]),
    .executable(name: "nearby-server", targets: ["nearby-server"]),
    .executable(name: "nearby-restore", targets: ["nearby-restore"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    // Only for its command plugin (Tools/scripts/openapi-generate.sh): no target uses it, so an
    // app that depends on us neither fetches nor builds it (nor OpenAPIKit, Yams...).
    .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
    .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    .package(
      url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(
      url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
    .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    // Tests only: ResolverContractTests reads openapi.yaml (the OpenAPI generator reads it too).
    .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
  ],
  targets: [
    // Libraries (Modules/).
    library("Strategy"),
    library("Tokens"),
    // Beacon and token frames as they ride in BLE advertisements.
    library("BeaconFrames", dependsOn: "Tokens"),
    library("Core", dependsOn: "Strategy", "Tokens", "BeaconFrames", logging, dequeModule),
    library(
      "Resolution", dependsOn: "Core", "Strategy", "Tokens", "BeaconFrames", logging, heapModule,
      crypto,
      cryptoExtras),
    library(
      "PeerResolution", dependsOn: "Core", "Resolution", "Strategy", "Tokens", logging, crypto,
      asyncAlgorithms),
    // What tests of apps and of mediums wait and record with; depends on nothing under Tests/.
    library("NearbyTesting", dependsOn: "Core", "Tokens"),
    library(
      "MediumTestKit", dependsOn: "NearbyTesting", "Core", "Strategy", "Tokens", "BeaconFrames",
      logging),
    library("PermissionStore", dependsOn: "Core", logging, asyncAlgorithms),
    library("BackgroundPersistence", dependsOn: "Core", "Strategy", "PermissionStore", logging),
    library("AudioModem", dependsOn: "Tokens"),
    library("AudioModemTestKit", dependsOn: "AudioModem", "Tokens"),
    library("DBus", dependsOn: "CDBus", logging),
    library("DesktopNotifications", dependsOn: "Core", "DBus", logging),
    library("Systemd", dependsOn: "CSystemd", logging),
    library("CommandLineSupport"),
    // The phone's web page (Tools/web-client and the modem's WebAssembly, embedded), served
    // by nearby-server and by `nearby --web`.
    library("WebClient", dependsOn: nioCore, crypto),
    // QR codes: the link `nearby --web` prints on a terminal.
    library("QRCode"),
    systemLibrary("CDBus", pkgConfig: "dbus-1", apt: "libdbus-1-dev"),
    // No pkg-config for libpulse: its flags are -D_REENTRANT and -pthread, which SwiftPM drops
    // with a warning in every build (apps' too); the headers are on the default path and the
    // module map names the libraries.
    systemLibrary("CPulse", pkgConfig: nil, apt: "libpulse-dev"),
    systemLibrary("CSystemd", pkgConfig: "libsystemd", apt: "libsystemd-dev"),
    // Libraries (Modules/) of the resolver server: its API, its storage, the server, its client.
    .target(
      name: "ResolverAPI",
      dependencies: [openAPIRuntime],
      path: "Modules/ResolverAPI",
      // Generated code (GeneratedSources/, committed, made from openapi.yaml ahead of time by
      // Tools/scripts/openapi-generate.sh), which we do not edit, in Swift 6 mode. No build
      // plugin: an app that depends on us would compile the generator (OpenAPIKit, Yams...).
      // No unsafe flags here (SwiftPM refuses them in a package depended on by version).
      // The document and the generator's configuration are inputs of the generator, not of the
      // build: excluded (or SwiftPM warns of 2 unhandled files, apps' builds too), but for the
      // command plugin, which finds them among the target's files
      // (Tools/scripts/openapi-generate.sh sets NEARBY_OPENAPI_GENERATE).
      exclude: Context.environment["NEARBY_OPENAPI_GENERATE"] == nil
        ? ["openapi.yaml", "openapi-generator-config.yaml"] : [],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    library(
      "ResolverWire", dependsOn: "ResolverAPI", "Core", "Strategy", "Tokens", "BeaconFrames",
      openAPIRuntime),
    library(
      "ResolverClient", dependsOn: "ResolverAPI", "ResolverWire", "Core", "Strategy", "Tokens",
      "BeaconFrames",
      logging, openAPIRuntime, openAPIAsyncHTTPClient, asyncHTTPClient, httpTypes, dequeModule,
      nioCore),
    // ResolverClient under its old name (deprecated): a re-export and nothing else.
    library("ServerResolver", dependsOn: "ResolverClient"),
    library(
      "ServerStorage", dependsOn: "Core", "Resolution", "Strategy", "Tokens", "BeaconFrames",
      logging, crypto, grdb,
      postgresNIO, nioCore, nioPosix, nioSSL),
    library(
      "NearbyServer", dependsOn: "ResolverAPI", "ResolverWire", "ServerStorage", "Core",
      "Resolution", "PeerResolution", "Strategy", "Tokens", "BeaconFrames", logging, hummingbird,
      hummingbirdCore,
      hummingbirdTLS,
      openAPIHummingbird,
      openAPIRuntime, serviceLifecycle, metrics, prometheus, nioCore, nioHTTPTypes, nioSSL,
      httpTypes, mustache, crypto, "WebClient"),

    // Medium plugins (Plugins/<Name>/): one folder, one target, one medium.
    plugin(
      "BLEBlueZ", dependsOn: "Core", "DBus", "Strategy", "Tokens", "BeaconFrames", logging,
      asyncAlgorithms),
    plugin("AudioPulse", dependsOn: "CPulse", "AudioModem", "Core", "Strategy", "Tokens", logging),
    plugin("LANMulticast", dependsOn: "Core", "Strategy", "Tokens", logging, crypto),

    // Executables (Tools/).
    executable(
      "nearby", dependsOn: "CommandLineSupport", "Core", "Strategy", "Tokens", "BeaconFrames",
      "PermissionStore",
      "BackgroundPersistence", "DBus", "BLEBlueZ", "AudioModem", "AudioPulse", "ResolverClient",
      "LANMulticast", "ResolverAPI", "ResolverWire", "PeerResolution", "Resolution", argumentParser,
      openAPIRuntime, openAPIAsyncHTTPClient, httpTypes, asyncHTTPClient, nioCore, nioPosix,
      nioHTTP1, nioSSL, logging, asyncAlgorithms, "WebClient", "QRCode"),
    executable(
      "nearby-server", dependsOn: "CommandLineSupport", "NearbyServer", "ServerStorage",
      "Resolution", "ResolverWire", "PeerResolution", "LANMulticast", argumentParser,
      serviceLifecycle, unixSignals, logging),
    executable(
      "nearby-restore", dependsOn: "CommandLineSupport", "Core", "Resolution", "PermissionStore",
      "BackgroundPersistence",
      "Systemd", "DesktopNotifications", "BLEBlueZ", "ResolverClient", argumentParser, logging,
      serviceLifecycle),
    executable(
      "nearby-bench", dependsOn: "CommandLineSupport", "TestSupport", "NearbyTesting", "Core",
      "Resolution",
      "MediumTestKit", "Strategy", "Tokens", "BeaconFrames", "NearbyServer", "ServerStorage",
      "PermissionStore",
      "BackgroundPersistence", "DBus", "BLEBlueZ", "AudioModem", "AudioModemTestKit", "AudioPulse",
      "ResolverClient", "LANMulticast", "ResolverAPI", "ResolverWire", "PeerResolution",
      argumentParser, asyncHTTPClient, nioCore, nioHTTP1, logging, serviceLifecycle, "WebClient"),

    // Test support (Tests/): shared by the tests, and programs the tests run.
    library(
      "TestSupport", dependsOn: "NearbyTesting", logging, inMemoryLogging, path: "Tests/TestSupport"
    ),
    library(
      "ServerTestSupport", dependsOn: "ServerStorage", "TestSupport", postgresNIO, logging,
      path: "Tests/ServerTestSupport"),
    library(
      "BlueZTestSupport", dependsOn: "DBus", "Tokens", "BeaconFrames", "Core", "BLEBlueZ",
      "TestSupport",
      "NearbyTesting",
      path: "Tests/BlueZTestSupport"),
    executable("bluez-double", dependsOn: "DBus", logging, path: "Tests/Executables/bluez-double"),
    executable(
      "nearby-store-probe", dependsOn: "PermissionStore",
      path: "Tests/Executables/nearby-store-probe"),

    // Tests (Tests/<Target>), Swift Testing.
    tests("StrategyTests", dependsOn: "Strategy"),
    tests("CommandLineSupportTests", dependsOn: "CommandLineSupport"),
    tests("NearbyTestingTests", dependsOn: "NearbyTesting"),
    tests("TokensTests", dependsOn: "Tokens", "NearbyTesting"),
    tests("BeaconFramesTests", dependsOn: "BeaconFrames", "Tokens", "NearbyTesting"),
    tests("QRCodeTests", dependsOn: "QRCode", "TestSupport"),
    tests(
      "CoreTests", dependsOn: "TestSupport", "NearbyTesting", "Core", "Strategy", "Tokens",
      "BeaconFrames",
      "MediumTestKit",
      "Resolution"),
    tests(
      "ResolutionTests", dependsOn: "Resolution", "Core", "Strategy", "Tokens", "BeaconFrames",
      "MediumTestKit"),
    tests(
      "PeerResolutionTests", dependsOn: "TestSupport", "NearbyTesting", "PeerResolution",
      "Resolution", "Core",
      "Strategy", "Tokens", "MediumTestKit", logging),
    tests(
      "MediumTestKitTests", dependsOn: "TestSupport", "NearbyTesting", "MediumTestKit", "Core",
      "Strategy",
      "Tokens"),
    tests(
      "IntegrationTests", dependsOn: "TestSupport", "NearbyTesting", "Core", "Resolution",
      "MediumTestKit",
      "Strategy", "Tokens", "BeaconFrames"),
    tests(
      "PermissionStoreTests", dependsOn: "TestSupport", "NearbyTesting", "PermissionStore", "Core",
      "MediumTestKit",
      "Resolution", "Strategy", inMemoryLogging),
    tests(
      "BackgroundPersistenceTests", dependsOn: "TestSupport", "NearbyTesting",
      "BackgroundPersistence",
      "PermissionStore", "Core", "Strategy", "MediumTestKit", "Resolution", "Tokens", "BeaconFrames"
    ),
    tests(
      "NearbyRestoreTests", dependsOn: "TestSupport", "NearbyTesting", "PermissionStore",
      "BackgroundPersistence",
      "Core", "Strategy", "MediumTestKit"),
    tests(
      "AudioModemTests", dependsOn: "AudioModem", "AudioModemTestKit", "Tokens", "TestSupport"),
    tests("DBusTests", dependsOn: "TestSupport", "NearbyTesting", "DBus"),
    tests(
      "DesktopNotificationsTests", dependsOn: "TestSupport", "NearbyTesting",
      "DesktopNotifications", "DBus", "Core",
      "BackgroundPersistence", "PermissionStore", "MediumTestKit", "Resolution", "Strategy",
      logging, inMemoryLogging),
    tests("SystemdTests", dependsOn: "Systemd", logging),
    tests(
      "ResolverWireTests", dependsOn: "ResolverWire", "ResolverAPI", "Core", "Strategy", "Tokens",
      "BeaconFrames",
      yams),
    tests(
      "ServerStorageTests", dependsOn: "ServerStorage", "ServerTestSupport", "TestSupport",
      "NearbyTesting",
      "Resolution", "Core", "Strategy", "Tokens", "BeaconFrames", nioSSL),
    tests(
      "NearbyServerTests", dependsOn: "TestSupport", "NearbyTesting", "NearbyServer",
      "ResolverClient",
      "ResolverWire", "PeerResolution",
      "ServerStorage", "ServerTestSupport", "Core", "Resolution", "MediumTestKit", "Strategy",
      "Tokens", "BeaconFrames", asyncHTTPClient, hummingbird, serviceLifecycle, logging,
      inMemoryLogging, nioCore,
      nioHTTP1, nioSSL),
    tests(
      "ConsoleTests", dependsOn: "TestSupport", "NearbyTesting", "NearbyServer", "ServerStorage",
      "ResolverWire",
      "ServerTestSupport", "Core", "Strategy", "Tokens", asyncHTTPClient, serviceLifecycle, logging,
      nioCore),
    tests(
      "BLEBlueZTests", dependsOn: "TestSupport", "NearbyTesting", "BlueZTestSupport", "BLEBlueZ",
      "DBus", "Core",
      "MediumTestKit", "Resolution", "Strategy", "Tokens", "BeaconFrames", "PeerResolution",
      inMemoryLogging),
    // MediumConformance against the real bluetoothd, run inside the BlueZ VM only
    // (Tools/scripts/bluez-vm/conformance.sh); the folder's name keeps it out of test.sh's loop.
    tests(
      "BLEBlueZVM", dependsOn: "TestSupport", "NearbyTesting", "BLEBlueZ", "DBus", "MediumTestKit",
      "Tokens", "BeaconFrames",
      "BlueZTestSupport", "Core", "Resolution", "Strategy", "PeerResolution", logging,
      path: "Tests/BLEBlueZVM"),
    tests(
      "AudioPulseTests", dependsOn: "TestSupport", "NearbyTesting", "AudioPulse", "AudioModem",
      "Core",
      "MediumTestKit", "Resolution", "Strategy", "Tokens", logging),
    tests(
      "LANMulticastTests", dependsOn: "TestSupport", "NearbyTesting", "LANMulticast",
      "MediumTestKit", "Core",
      "Resolution", "PeerResolution", "Strategy", "Tokens", logging, crypto),
    tests(
      "BeaconEndToEndTests", dependsOn: "TestSupport", "NearbyTesting", "BlueZTestSupport",
      "BLEBlueZ", "DBus",
      "Core", "MediumTestKit", "NearbyServer", "Resolution", "ResolverClient", "ServerStorage",
      "Strategy", "Tokens", "BeaconFrames", logging, serviceLifecycle),
    tests(
      "NearbyCLITests", dependsOn: "TestSupport", "NearbyTesting", "CommandLineSupport",
      "MediumTestKit",
      "BlueZTestSupport", "DBus",
      "ResolverWire",
      "Tokens", "BeaconFrames", "Resolution", "ServerStorage", "PeerResolution"),
  ]
)
