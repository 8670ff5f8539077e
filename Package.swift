// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
  name: "nearby-linux",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Strategy", targets: ["Strategy"]),
    .library(name: "Tokens", targets: ["Tokens"]),
    .library(name: "Core", targets: ["Core"]),
    .library(name: "Resolution", targets: ["Resolution"]),
    .library(name: "PeerResolution", targets: ["PeerResolution"]),
    .library(name: "MediumTestKit", targets: ["MediumTestKit"]),
    .library(name: "ServerStorage", targets: ["ServerStorage"]),
    .library(name: "ServerResolver", targets: ["ServerResolver"]),
    .library(name: "NearbyServer", targets: ["NearbyServer"]),
    .library(name: "DBus", targets: ["DBus"]),
    .library(name: "BLEBlueZ", targets: ["BLEBlueZ"]),
    .library(name: "AudioModem", targets: ["AudioModem"]),
    .library(name: "AudioPulse", targets: ["AudioPulse"]),
    .executable(name: "nearby", targets: ["nearby"]),
    .executable(name: "nearby-server", targets: ["nearby-server"]),
    .executable(name: "nearby-restore", targets: ["nearby-restore"]),
    .library(name: "PermissionStore", targets: ["PermissionStore"]),
    .library(name: "BackgroundPersistence", targets: ["BackgroundPersistence"]),
    .library(name: "LANMulticast", targets: ["LANMulticast"]),
    .library(name: "DesktopNotifications", targets: ["DesktopNotifications"]),
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
  ],
  targets: [
    .target(name: "Strategy", path: "Modules/Strategy", swiftSettings: strictSwift),
    .target(name: "Tokens", path: "Modules/Tokens", swiftSettings: strictSwift),
    .target(
      name: "Core",
      dependencies: [
        "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "DequeModule", package: "swift-collections"),
      ],
      path: "Modules/Core",
      swiftSettings: strictSwift
    ),
    .target(
      name: "Resolution",
      dependencies: [
        "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "HeapModule", package: "swift-collections"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ],
      path: "Modules/Resolution",
      swiftSettings: strictSwift
    ),
    .target(
      name: "PeerResolution",
      dependencies: [
        "Core", "Resolution", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Modules/PeerResolution",
      swiftSettings: strictSwift
    ),
    .target(
      name: "MediumTestKit",
      dependencies: [
        "TestSupport", "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Modules/MediumTestKit",
      swiftSettings: strictSwift
    ),
    .target(
      name: "AudioModem", dependencies: ["Tokens"], path: "Modules/AudioModem",
      swiftSettings: strictSwift),
    .target(
      name: "AudioModemTestKit", dependencies: ["AudioModem", "Tokens"],
      path: "Modules/AudioModemTestKit", swiftSettings: strictSwift),
    .systemLibrary(
      name: "CPulse", path: "Modules/CPulse", pkgConfig: "libpulse-simple",
      providers: [.apt(["libpulse-dev"])]),
    .target(
      name: "AudioPulse",
      dependencies: [
        "CPulse", "AudioModem", "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Plugins/AudioPulse", swiftSettings: strictSwift),
    .target(
      name: "ServerStorage",
      dependencies: [
        "Core", "Resolution", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      path: "Modules/ServerStorage",
      swiftSettings: strictSwift
    ),
    .target(
      name: "ResolverAPI",
      dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
      path: "Modules/ResolverAPI",
      // Generated code, which we cannot edit, in Swift 6 mode. No unsafe flags here (SwiftPM
      // refuses them in a package depended on by version): the generated sources' own warnings
      // live under .build, which the test command's no-warnings check does not read.
      swiftSettings: [.swiftLanguageMode(.v6)],
      plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
    ),
    .target(
      name: "ResolverWire",
      dependencies: [
        "ResolverAPI", "Core", "Strategy", "Tokens",
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ],
      path: "Modules/ResolverWire",
      swiftSettings: strictSwift
    ),
    .target(
      name: "ServerResolver",
      dependencies: [
        "ResolverAPI", "ResolverWire", "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "NIOCore", package: "swift-nio"),
      ],
      path: "Modules/ServerResolver",
      swiftSettings: strictSwift
    ),
    .target(
      name: "NearbyServer",
      dependencies: [
        "ResolverAPI", "ResolverWire", "ServerStorage", "Core", "Resolution", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Mustache", package: "swift-mustache"),
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Modules/NearbyServer",
      swiftSettings: strictSwift
    ),
    .target(
      name: "PermissionStore",
      dependencies: [
        "Core", .product(name: "Logging", package: "swift-log"),
        .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
      ],
      path: "Modules/PermissionStore",
      swiftSettings: strictSwift
    ),
    .target(
      name: "BackgroundPersistence",
      dependencies: [
        "Core", "Strategy", "PermissionStore", .product(name: "Logging", package: "swift-log"),
      ],
      path: "Modules/BackgroundPersistence",
      swiftSettings: strictSwift
    ),
    .systemLibrary(
      name: "CSystemd", path: "Modules/CSystemd", pkgConfig: "libsystemd",
      providers: [.apt(["libsystemd-dev"])]
    ),
    .target(
      name: "Systemd",
      dependencies: ["CSystemd", .product(name: "Logging", package: "swift-log")],
      path: "Modules/Systemd",
      swiftSettings: strictSwift
    ),
    .executableTarget(
      name: "nearby-restore",
      dependencies: [
        "Core", "Resolution", "PermissionStore", "BackgroundPersistence", "Systemd",
        "DesktopNotifications", "BLEBlueZ", "ServerResolver",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      path: "Tools/nearby-restore",
      swiftSettings: strictSwift
    ),
    .executableTarget(
      name: "nearby-store-probe",
      dependencies: ["PermissionStore"],
      path: "Tests/Executables/nearby-store-probe",
      swiftSettings: strictSwift
    ),
    .systemLibrary(
      name: "CDBus", path: "Modules/CDBus", pkgConfig: "dbus-1",
      providers: [.apt(["libdbus-1-dev"])]
    ),
    .target(
      name: "DBus",
      dependencies: ["CDBus", .product(name: "Logging", package: "swift-log")],
      path: "Modules/DBus",
      swiftSettings: strictSwift
    ),
    .target(
      name: "CommandLineSupport", path: "Modules/CommandLineSupport", swiftSettings: strictSwift),
    .executableTarget(
      name: "nearby",
      dependencies: [
        "CommandLineSupport", "Core", "Strategy", "Tokens", "PermissionStore",
        "BackgroundPersistence", "DBus",
        "BLEBlueZ", "AudioModem", "AudioPulse", "ServerResolver", "LANMulticast", "ResolverAPI",
        "ResolverWire", "PeerResolution", "Resolution",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
      ],
      path: "Tools/nearby",
      swiftSettings: strictSwift
    ),
    .executableTarget(
      name: "nearby-server",
      dependencies: [
        "CommandLineSupport", "NearbyServer", "ServerStorage", "Resolution", "ResolverWire",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tools/nearby-server",
      swiftSettings: strictSwift
    ),
    .executableTarget(
      name: "nearby-bench",
      dependencies: [
        "CommandLineSupport", "TestSupport", "Core", "Resolution", "MediumTestKit", "Strategy",
        "Tokens",
        "NearbyServer",
        "ServerStorage", "PermissionStore", "BackgroundPersistence", "DBus", "BLEBlueZ",
        "AudioModem", "AudioModemTestKit", "AudioPulse", "ServerResolver", "LANMulticast",
        "ResolverAPI", "ResolverWire", "PeerResolution",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      path: "Tools/nearby-bench",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "PermissionStoreTests",
      dependencies: [
        "TestSupport", "PermissionStore", "Core", "MediumTestKit", "Resolution", "Strategy",
        .product(name: "InMemoryLogging", package: "swift-log"),
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "BackgroundPersistenceTests",
      dependencies: [
        "TestSupport",
        "BackgroundPersistence", "PermissionStore", "Core", "Strategy", "MediumTestKit",
        "Resolution", "Tokens",
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "SystemdTests",
      dependencies: ["Systemd", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "NearbyRestoreTests",
      dependencies: [
        "TestSupport",
        "PermissionStore", "BackgroundPersistence", "Core", "Strategy", "MediumTestKit",
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(name: "StrategyTests", dependencies: ["Strategy"], swiftSettings: strictSwift),
    .testTarget(name: "TokensTests", dependencies: ["Tokens"], swiftSettings: strictSwift),
    .testTarget(
      name: "CoreTests",
      dependencies: ["TestSupport", "Core", "Strategy", "Tokens", "MediumTestKit", "Resolution"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "ResolutionTests",
      dependencies: ["Resolution", "Core", "Strategy", "Tokens", "MediumTestKit"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "PeerResolutionTests",
      dependencies: [
        "TestSupport", "PeerResolution", "Resolution", "Core", "Strategy", "Tokens",
        "MediumTestKit", .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "MediumTestKitTests",
      dependencies: ["TestSupport", "MediumTestKit", "Core", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .target(
      name: "TestSupport",
      dependencies: [
        .product(name: "Logging", package: "swift-log"),
        .product(name: "InMemoryLogging", package: "swift-log"),
      ],
      path: "Tests/TestSupport",
      swiftSettings: strictSwift
    ),
    .target(
      name: "ServerTestSupport",
      dependencies: [
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tests/ServerTestSupport",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "ServerStorageTests",
      dependencies: [
        "ServerStorage", "ServerTestSupport", "TestSupport", "Resolution", "Core", "Strategy",
        "Tokens", .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "ResolverWireTests",
      dependencies: ["ResolverWire", "ResolverAPI", "Core", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "NearbyServerTests",
      dependencies: [
        "TestSupport",
        "NearbyServer", "ServerResolver", "ServerStorage", "ServerTestSupport", "Core",
        "Resolution", "MediumTestKit", "Strategy", "Tokens",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "ConsoleTests",
      dependencies: [
        "TestSupport",
        "NearbyServer", "ServerStorage", "ServerTestSupport", "Core", "Strategy", "Tokens",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
      ],
      swiftSettings: strictSwift
    ),
    .target(
      name: "LANMulticast",
      dependencies: [
        "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Plugins/LANMulticast",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "LANMulticastTests",
      dependencies: [
        "TestSupport",
        "LANMulticast", "MediumTestKit", "Core", "Resolution", "PeerResolution", "Strategy",
        "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "NearbyCLITests",
      dependencies: [
        "TestSupport", "MediumTestKit", "BlueZTestSupport", "DBus", "Tokens", "Resolution",
        "ServerStorage", "PeerResolution",
      ],
      swiftSettings: strictSwift),
    .testTarget(
      name: "AudioModemTests", dependencies: ["AudioModem", "AudioModemTestKit", "Tokens"],
      swiftSettings: strictSwift),
    .testTarget(
      name: "AudioPulseTests",
      dependencies: [
        "TestSupport",
        "AudioPulse", "AudioModem", "Core", "MediumTestKit", "Resolution", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSwift),
    .testTarget(
      name: "IntegrationTests",
      dependencies: ["TestSupport", "Core", "Resolution", "MediumTestKit", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .target(
      name: "BLEBlueZ",
      dependencies: [
        "Core", "DBus", "Strategy", "Tokens", .product(name: "Logging", package: "swift-log"),
      ],
      path: "Plugins/BLEBlueZ",
      swiftSettings: strictSwift
    ),
    .executableTarget(
      name: "bluez-double",
      dependencies: ["DBus", .product(name: "Logging", package: "swift-log")],
      path: "Tests/Executables/bluez-double",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "BeaconEndToEndTests",
      dependencies: [
        "TestSupport",
        "BlueZTestSupport", "BLEBlueZ", "DBus", "Core", "MediumTestKit", "NearbyServer",
        "Resolution", "ServerResolver", "ServerStorage", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSwift
    ),
    .target(
      name: "BlueZTestSupport",
      dependencies: ["DBus", "Tokens", "Core", "BLEBlueZ"],
      path: "Tests/BlueZTestSupport",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "BLEBlueZTests",
      dependencies: [
        "TestSupport", "BlueZTestSupport",
        "BLEBlueZ", "DBus", "Core", "MediumTestKit", "Resolution", "Strategy", "Tokens",
        "PeerResolution", .product(name: "InMemoryLogging", package: "swift-log"),
      ],
      swiftSettings: strictSwift
    ),
    // MediumConformance against the real bluetoothd, run inside the BlueZ VM only
    // (Tools/scripts/bluez-vm/conformance.sh); the folder's name keeps it out of test.sh's loop.
    .testTarget(
      name: "BLEBlueZVM",
      dependencies: [
        "TestSupport", "BLEBlueZ", "DBus", "MediumTestKit", "Tokens", "BlueZTestSupport", "Core",
        "Resolution", "Strategy", "PeerResolution",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tests/BLEBlueZVM",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "DBusTests", dependencies: ["TestSupport", "DBus"],
      swiftSettings: strictSwift),
    .target(
      name: "DesktopNotifications",
      dependencies: ["Core", "DBus", .product(name: "Logging", package: "swift-log")],
      path: "Modules/DesktopNotifications",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "DesktopNotificationsTests",
      dependencies: [
        "TestSupport",
        "DesktopNotifications", "DBus", "Core", "BackgroundPersistence", "PermissionStore",
        "MediumTestKit", "Resolution", "Strategy", .product(name: "Logging", package: "swift-log"),
        .product(name: "InMemoryLogging", package: "swift-log"),
      ],
      swiftSettings: strictSwift
    ),
  ]
)
