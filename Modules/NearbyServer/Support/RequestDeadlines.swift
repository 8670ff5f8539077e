import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// What one connection's deadlines decide, on instants (``RequestDeadlineHandler`` feeds it
/// what happened and performs the rest): when the connection is to be closed, and which
/// request parts are dropped rather than handed to the application.
///
/// - A request head must arrive within `head` of the connection opening, or of the previous
///   answer ending.
/// - A body must arrive whole within `unauthenticatedBody` of its head, or within `body` once
///   the request authenticated (``authenticated()``: an API key or a console session was
///   checked). A body read before any credential (the console's sign-in form carries the key)
///   so has the short deadline, whatever route reads it.
/// - An answer being made or sent (an event stream) is not timed.
/// - An answer that ends before its request's body arrived (a 413 for a body over the limit,
///   a 401 before the body is read) is followed by the rest of that body being read and
///   dropped, within `head` of the answer: a client that sends its whole body before reading
///   (as urllib does) then reads the answer, instead of finding its upload stuck because
///   nobody reads it and the connection cut under it ("broken pipe", never the answer). So
///   is anything sent after the answer to a request that asked to close the connection
///   (`Connection: close`), so that the client's end of the connection is seen.
///
/// Pipelined requests are counted: only the answer to the latest request can start dropping.
/// An authentication is the latest request's (a pipelined head read early takes it).
struct RequestDeadlineStateMachine {
  struct Timeouts {
    var head: TimeAmount
    var body: TimeAmount
    var unauthenticatedBody: TimeAmount
  }

  /// What to do with a request part.
  enum Part: Equatable {
    case forward
    case drop
  }

  /// How the latest request's body stands.
  private enum Body {
    /// Still arriving, after a head that came at `head`; `checked`: the request
    /// authenticated, so the body has the longer deadline.
    case arriving(head: NIODeadline, checked: Credential)
    /// Arrived whole (or no request yet).
    case ended
  }

  /// Whether a request's credential was checked.
  private enum Credential {
    case unchecked
    case checked
  }

  /// What the latest request asked of the connection after its answer.
  private enum AfterAnswer {
    case keepOpen
    case close
  }

  let timeouts: Timeouts
  /// When the connection is to be closed; nil: not timed.
  private(set) var deadline: NIODeadline?
  private var heads = 0
  private var answers = 0
  private var body = Body.ended
  private var afterAnswer = AfterAnswer.keepOpen

  init(timeouts: Timeouts) {
    self.timeouts = timeouts
  }

  /// Whether what arrives is read and dropped: the latest request was answered, and its
  /// body is still arriving or the connection is to close. The handler then reads on its
  /// own, since nobody else reads (the application stopped reading for a closing connection).
  var isDropping: Bool {
    guard heads > 0, answers == heads else { return false }
    if case .arriving = body { return true }
    return afterAnswer == .close
  }

  /// The connection opened.
  mutating func opened(now: NIODeadline) {
    deadline = now + timeouts.head
  }

  /// A request head arrived; `closes`: it asks that the connection close after its answer
  /// (decided as the server decides it: `Connection: close`).
  mutating func head(closes: Bool, now: NIODeadline) -> Part {
    // Nothing after a closing request's answer is read as a request.
    if isDropping { return .drop }
    heads += 1
    body = .arriving(head: now, checked: .unchecked)
    afterAnswer = closes ? .close : .keepOpen
    deadline = now + min(timeouts.unauthenticatedBody, timeouts.body)
    return .forward
  }

  /// A part of the body arrived.
  func bodyPart() -> Part {
    isDropping ? .drop : .forward
  }

  /// The request's end arrived.
  mutating func end(now: NIODeadline) -> Part {
    guard case .arriving = body else { return isDropping ? .drop : .forward }
    body = .ended
    // Answered already: the next head (or the client's close) is timed from now; otherwise
    // the answer is being made, and is not timed.
    deadline = answers == heads ? now + timeouts.head : nil
    // Forwarded even when the body was dropped: the server waits for the end of a request
    // it answered before reading the next one.
    return .forward
  }

  /// The latest request authenticated: its body has the longer deadline, from its head.
  mutating func authenticated() {
    guard case .arriving(let head, .unchecked) = body, answers < heads else { return }
    body = .arriving(head: head, checked: .checked)
    deadline = head + timeouts.body
  }

  /// An answer ended.
  mutating func answerEnded(now: NIODeadline) {
    answers = min(answers + 1, heads)
    // An earlier pipelined request's answer: the latest request keeps its own deadline.
    guard answers == heads else { return }
    deadline = now + timeouts.head
  }
}

/// Performs ``RequestDeadlineStateMachine`` on a connection: closes it at the machine's
/// deadline, drops the parts it says to drop and reads on its own while it drops. The idle
/// timeout alone lets a client that sends a byte now and then hold a connection for ever
/// (slowloris), in the head or in a body with a large `Content-Length`; these deadlines bound
/// each part however it trickles in.
///
/// Runs on the connection's event loop, as every channel handler does. The application says a
/// request authenticated with the outbound user event ``Authenticated``
/// (``RequestBodyDeadline/authenticated()``).
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  /// The outbound user event that says the current request authenticated.
  struct Authenticated: Sendable {}

  private var machine: RequestDeadlineStateMachine
  private var scheduled: (deadline: NIODeadline, task: Scheduled<Void>)?

  init(headTimeout: TimeAmount, bodyTimeout: TimeAmount, unauthenticatedBodyTimeout: TimeAmount) {
    machine = RequestDeadlineStateMachine(
      timeouts: .init(
        head: headTimeout, body: bodyTimeout, unauthenticatedBody: unauthenticatedBodyTimeout))
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { opened(context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    opened(context)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let part: RequestDeadlineStateMachine.Part
    switch unwrapInboundIn(data) {
    case .head(let head):
      // As Hummingbird decides to close after the answer (HTTPChannelHandler).
      part = machine.head(closes: head.headerFields[.connection] == "close", now: .now())
    case .body: part = machine.bodyPart()
    case .end: part = machine.end(now: .now())
    }
    perform(context)
    if part == .forward { context.fireChannelRead(data) }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    context.fireChannelReadComplete()
    // The application does not read what is dropped: read the rest here.
    if machine.isDropping { context.read() }
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if case .end = unwrapOutboundIn(data) {
      machine.answerEnded(now: .now())
      perform(context)
      if machine.isDropping { context.read() }
    }
    context.write(data, promise: promise)
  }

  func triggerUserOutboundEvent(
    context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?
  ) {
    guard event is Authenticated else {
      context.triggerUserOutboundEvent(event, promise: promise)
      return
    }
    machine.authenticated()
    perform(context)
    promise?.succeed()
  }

  func channelInactive(context: ChannelHandlerContext) {
    cancel()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) { cancel() }

  private func opened(_ context: ChannelHandlerContext) {
    machine.opened(now: .now())
    perform(context)
  }

  /// Schedules the close at the machine's deadline (if it moved).
  private func perform(_ context: ChannelHandlerContext) {
    guard scheduled?.deadline != machine.deadline else { return }
    cancel()
    guard let deadline = machine.deadline else { return }
    let channel = context.channel
    scheduled = (
      deadline, context.eventLoop.scheduleTask(deadline: deadline) { channel.close(promise: nil) }
    )
  }

  private func cancel() {
    scheduled?.task.cancel()
    scheduled = nil
  }
}

/// The connection of the request being handled, so that whoever authenticates it (the API key
/// middleware, the console's session check) can give its body the longer deadline
/// (``RequestDeadlineStateMachine``). Set for every route by `ClientAddressMiddleware`.
struct RequestBodyDeadline: Sendable {
  let channel: any Channel

  @TaskLocal static var current: RequestBodyDeadline?

  /// Says the request authenticated.
  func authenticated() {
    channel.triggerUserOutboundEvent(RequestDeadlineHandler.Authenticated(), promise: nil)
  }
}
