import Foundation
import Glibc

/// The POSIX side of one store: the JSON file, its lock file, the temporary file and the
/// durable replace. Every call blocks; only the store's I/O thread makes them.
///
/// - `<app id>.json`: the values, pretty-printed JSON with sorted keys.
/// - `<app id>.json.lock`: never renamed, so `flock` on it excludes writers of every process
///   (a lock on the data file itself would be lost with the inode each rename replaces).
/// - `<app id>.json.tmp`: the next version, written and fsync'd before it is renamed over the
///   file; only the lock holder writes it, so a stale one left by a crash is simply truncated.
struct StoreFile {
  let directory: URL
  let file: URL
  private let lockFD: Int32
  private let directoryFD: Int32

  /// What the file held when read: the values, or why they could not be read.
  enum Contents {
    case missing
    case values([String: StoreValue])
    case unreadable(String)
  }

  init(directory: URL, appID: String) throws(StoreError) {
    self.directory = directory
    self.file = directory.appendingPathComponent("\(appID).json")
    try Self.makeDirectory(directory.path)
    let lockPath = file.path + ".lock"
    let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard lock >= 0 else { throw .system(operation: "open", path: lockPath, errno: errno) }
    let dir = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard dir >= 0 else {
      let code = errno
      Glibc.close(lock)
      throw .system(operation: "open", path: directory.path, errno: code)
    }
    lockFD = lock
    directoryFD = dir
  }

  func close() {
    Glibc.close(lockFD)
    Glibc.close(directoryFD)
  }

  /// Creates `path` and its parents (mode 0700, as XDG asks for config folders).
  private static func makeDirectory(_ path: String) throws(StoreError) {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      isDirectory.boolValue
    {
      return
    }
    do {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw .system(operation: "mkdir", path: path, errno: errno == 0 ? EIO : errno)
    }
  }

  /// Runs `body` holding the lock file's `flock` (exclusive for writers, shared for readers).
  func withLock<T>(exclusive: Bool, _ body: () throws -> T) throws -> T {
    while flock(lockFD, exclusive ? LOCK_EX : LOCK_SH) != 0 {
      guard errno == EINTR else {
        throw StoreError.system(operation: "flock", path: file.path + ".lock", errno: errno)
      }
    }
    defer { _ = flock(lockFD, LOCK_UN) }
    return try body()
  }

  /// Reads and parses the file. Call with the lock held.
  func read() -> Contents {
    let fd = open(file.path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
      if errno == ENOENT { return .missing }
      return .unreadable("open: \(String(cString: strerror(errno)))")
    }
    defer { Glibc.close(fd) }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count == 0 { break }
      if count < 0 {
        if errno == EINTR { continue }
        return .unreadable("read: \(String(cString: strerror(errno)))")
      }
      data.append(contentsOf: buffer[0..<count])
    }
    do {
      return .values(try JSONDecoder().decode([String: StoreValue].self, from: data))
    } catch {
      return .unreadable(data.isEmpty ? "the file is empty" : "not a JSON object: \(error)")
    }
  }

  /// An identity of the file's current version: inode, size and change time (every write
  /// renames a new inode into place). `nil` when there is no file.
  func version() -> [Int]? {
    var info = stat()
    guard stat(file.path, &info) == 0 else { return nil }
    return [
      Int(info.st_ino), Int(info.st_size), Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec),
    ]
  }

  /// Replaces the file with `values` durably: write the temporary file, fsync it, rename it
  /// over the file, fsync the directory. Call with the exclusive lock held.
  func write(_ values: [String: StoreValue]) throws(StoreError) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data: Data
    do {
      data = try encoder.encode(values)
    } catch {
      throw .unencodable(key: "*", reason: "\(error)")
    }
    data.append(0x0A)
    let temporary = file.path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .system(operation: "open", path: temporary, errno: errno) }
    var failure: StoreError?
    data.withUnsafeBytes { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          failure = .system(operation: "write", path: temporary, errno: errno)
          return
        }
        offset += written
      }
    }
    if failure == nil, fsync(fd) != 0 {
      failure = .system(operation: "fsync", path: temporary, errno: errno)
    }
    Glibc.close(fd)
    if let failure {
      unlink(temporary)
      throw failure
    }
    guard rename(temporary, file.path) == 0 else {
      let code = errno
      unlink(temporary)
      throw .system(operation: "rename", path: file.path, errno: code)
    }
    guard fsync(directoryFD) == 0 else {
      throw .system(operation: "fsync", path: directory.path, errno: errno)
    }
  }

  /// Renames the unreadable file to `<file>.corrupt-<UTC time>` (a counter is added if that
  /// name exists). Call with the exclusive lock held.
  func moveAside(reason: String, now: Date = Date()) throws(StoreError) -> CorruptFile {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    let base = file.path + ".corrupt-" + formatter.string(from: now)
    var target = base
    var counter = 1
    while access(target, F_OK) == 0 {
      counter += 1
      target = "\(base)-\(counter)"
    }
    guard rename(file.path, target) == 0 else {
      throw .system(operation: "rename", path: file.path, errno: errno)
    }
    _ = fsync(directoryFD)
    return CorruptFile(movedTo: URL(fileURLWithPath: target), reason: reason, at: now)
  }
}
