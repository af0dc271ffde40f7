/// Carries committed changes between the processes that share one database (several `photowall
/// serve` instances on one PostgreSQL), so that a write on one reaches live subscribers on all.
///
/// The notifier is app-blind: it moves opaque UTF-8 text (the services encode an event into it)
/// and knows nothing of classes. It never hands a process its own messages back: the sender
/// delivered those locally already.
///
/// Delivery is at most once: a message sent while a receiver's connection is down is lost to that
/// receiver (clients catch up through queries, e.g. the feed cursor).
public protocol ChangeNotifier: Sendable {
    /// Sends `payload` to every other process listening, after the write it describes committed.
    /// Returns at once (the sending happens in order on the notifier's own thread); failures are
    /// logged, never thrown to the writer.
    func publish(_ payload: String)

    /// Starts receiving: `handler` gets each payload another process published, in the order that
    /// process sent them, on the notifier's listener thread (it must only enqueue work).
    func listen(_ handler: @escaping @Sendable (String) -> Void)

    /// Stops listening and sending (idempotent).
    func stop()
}
