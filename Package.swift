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
    .library(name: "MediumTestKit", targets: ["MediumTestKit"]),
    .executable(name: "nearby", targets: ["nearby"]),
    .executable(name: "nearby-restore", targets: ["nearby-restore"]),
    .library(name: "PermissionStore", targets: ["PermissionStore"]),
    .library(name: "BackgroundPersistence", targets: ["BackgroundPersistence"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
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
      ],
      path: "Modules/Resolution",
      swiftSettings: strictSwift
    ),
    .target(
      name: "MediumTestKit",
      dependencies: [
        "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Modules/MediumTestKit",
      swiftSettings: strictSwift
    ),
    .target(
      name: "PermissionStore",
      dependencies: ["Core", .product(name: "Logging", package: "swift-log")],
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
      path: "Tools/nearby-store-probe",
      swiftSettings: strictSwift
    ),
    .executableTarget(
      name: "nearby",
      dependencies: [
        "Core", "Resolution", "MediumTestKit", "Strategy", "Tokens", "PermissionStore",
        "BackgroundPersistence",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tools/nearby",
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "PermissionStoreTests",
      dependencies: ["PermissionStore", "Core", "MediumTestKit", "Resolution"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "BackgroundPersistenceTests",
      dependencies: [
        "BackgroundPersistence", "PermissionStore", "Core", "Strategy", "MediumTestKit",
        "Resolution",
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
        "PermissionStore", "BackgroundPersistence", "Core", "Strategy", "MediumTestKit",
      ],
      swiftSettings: strictSwift
    ),
    .testTarget(name: "StrategyTests", dependencies: ["Strategy"], swiftSettings: strictSwift),
    .testTarget(name: "TokensTests", dependencies: ["Tokens"], swiftSettings: strictSwift),
    .testTarget(
      name: "CoreTests",
      dependencies: ["Core", "Strategy", "Tokens", "MediumTestKit", "Resolution"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "ResolutionTests",
      dependencies: ["Resolution", "Core", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "MediumTestKitTests",
      dependencies: ["MediumTestKit", "Core", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "IntegrationTests",
      dependencies: ["Core", "Resolution", "MediumTestKit", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
  ]
)
