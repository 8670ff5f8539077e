// A helper for PermissionStoreTests: a second process that writes to a DefaultsStore.
// Not installed for users; the tests run it from the build folder.
//
//   nearby-store-probe write-loop DIR APP KEY     set KEY to 1, 2, 3, ... forever; after each
//                                                 write returns, print its number on stdout
//   nearby-store-probe increment DIR APP KEY N    add 1 to KEY N times (read-modify-write)
//   nearby-store-probe set DIR APP KEY INT        set KEY to INT once
import Foundation
import PermissionStore

let arguments = CommandLine.arguments
guard arguments.count >= 5 else {
  FileHandle.standardError.write(
    Data("usage: nearby-store-probe write-loop|increment|set DIR APP KEY [N]\n".utf8))
  exit(64)
}
let directory = URL(fileURLWithPath: arguments[2])
let store = try await DefaultsStore(appID: arguments[3], directory: directory)
let key = arguments[4]
switch arguments[1] {
case "write-loop":
  var value = 1
  while true {
    try await store.set(value, forKey: key)
    FileHandle.standardOutput.write(Data("\(value)\n".utf8))
    value += 1
  }
case "increment":
  let count = Int(arguments[5]) ?? 0
  for _ in 0..<count {
    try await store.update(key, as: Int.self) { ($0 ?? 0) + 1 }
  }
case "set":
  try await store.set(Int(arguments[5]) ?? 0, forKey: key)
default:
  FileHandle.standardError.write(Data("unknown command \(arguments[1])\n".utf8))
  exit(64)
}
