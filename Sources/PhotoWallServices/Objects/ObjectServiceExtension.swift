import PhotoWallCore
import PhotoWallStorage

/// A cloud function: `POST /functions/:name` with JSON params → `{"result": …}` (the result is
/// the function's value; a thrown `ParseError` is the answer's `{code,error}`).
public typealias CloudFunction = @Sendable (_ params: [String: JSON], _ auth: AuthContext) throws(ParseError) -> FunctionResult

/// A cloud function as an extension declares it: like `CloudFunction`, and handed the object
/// service it is installed in, so the extension needs no reference to it (it is built first).
public typealias ExtensionFunction = @Sendable (_ params: [String: JSON], _ auth: AuthContext, _ objects: ObjectService) throws(ParseError) -> FunctionResult

/// What a cloud function answers: the `result` of `{"result": …}`.
public enum FunctionResult: Sendable {
    /// A value.
    case json(JSON)
    /// The value's JSON text (UTF-8), rendered straight into bytes (`JSONWriter`); sent as it is.
    case text([UInt8])
}

/// What a hook adds to a create or update before anything is stored (outside any transaction).
public struct SaveHookOutcome: Sendable {
    /// Fields in wire form; they override the client's.
    public var fields: [String: JSON]
    /// Called when the save fails afterwards, so the hook's side effects (e.g. stored thumbnail
    /// files) don't outlive it.
    public var undo: (@Sendable () -> Void)?
    /// Called once the save is stored (e.g. removing the files the new values replaced).
    public var afterSave: (@Sendable () -> Void)?
    public init(fields: [String: JSON] = [:], undo: (@Sendable () -> Void)? = nil, afterSave: (@Sendable () -> Void)? = nil) {
        self.fields = fields; self.undo = undo; self.afterSave = afterSave
    }
}

/// Who may download a stored file, asked by `GET /files/:appId/:name` before anything is sent.
public protocol FileAccess: Sendable {
    /// Whether a request may download `name`; false answers 404 `File not found.`.
    /// - Parameters:
    ///   - query: the request's query parameters (e.g. a signed URL's `exp` and `sig`).
    ///   - auth: credentials from headers, when sent.
    ///   - objects: the service whose rules decide who may see an object (`ObjectService.isVisible`).
    func mayDownload(_ name: String, query: [String: String], auth: AuthContext?, objects: ObjectService) throws(ParseError) -> Bool
}

/// Everything an app adds to the generic `ObjectService`, in one typed value installed at init
/// (`ObjectService(database:config:installing:)`): the app's classes, who may read and write
/// them, what happens around their saves and deletes, its cloud functions, who may download its
/// files and its leftovers sweep. Every method has a default that adds nothing, so an extension
/// implements only what it changes. The master key bypasses the read and write rules (not the
/// hooks, which see `auth` and decide).
///
/// Call order on a client save: `writeRules(for:)` (server-owned, immutable and declared fields),
/// then `beforeSave`, then the store, then the outcome's `afterSave`, then `render` on the echoed
/// fields. On a read: `readScope` (added to the ACL), `restrictedView(for:)` (fields and queries
/// of non-owners), then `render`. On a delete: `mayDelete` (beyond the ACL), the store, `afterDelete`.
public protocol ObjectServiceExtension: Sendable {
    /// What clients may write on `className` (see `ClassWriteRules`); nil: Parse's defaults.
    func writeRules(for className: String) -> ClassWriteRules?
    /// An extra read restriction for `className` beyond ACLs: a predicate every non-master read of
    /// the class must also satisfy (GET, queries, counts, `include` except through one of the
    /// class's `RestrictedView.revealedThrough` fields). nil: no restriction. Not asked for the master key.
    func readScope(className: String, auth: AuthContext) throws(ParseError) -> Predicate?
    /// What non-owners see of `className`'s objects, and may query (e.g. private `_User`s).
    func restrictedView(for className: String) -> RestrictedView?
    /// Runs on a create or update body that passed the write rules (values equal to the stored
    /// ones are gone from it): may add fields or refuse the save by throwing. `original` is the
    /// stored object an update changes (nil on create). nil: nothing to add.
    func beforeSave(className: String, body: [String: JSON], auth: AuthContext,
                    original: StoredObject?) throws(ParseError) -> SaveHookOutcome?
    /// Last touches to an object's wire form, on every read and on a save's echoed fields (e.g.
    /// signing file URLs). `object` holds at least the fields that hold Files: objects rendered from
    /// their stored text (`ObjectService.writeStoredRow`) pass only those, so `render` may change or
    /// remove those and add fields, but must not depend on the others.
    func render(_ object: inout [String: JSON], className: String)
    /// Whether `render` may change objects of `className`; false lets the stored-row renderer write
    /// their Files without decoding them. Default true.
    func renders(className: String) -> Bool
    /// May `auth` (never the master key) delete `object` although its ACL doesn't let them?
    /// (e.g. an image's owner deleting comments on it).
    func mayDelete(_ object: StoredObject, auth: AuthContext) throws(ParseError) -> Bool
    /// Runs after an object was deleted (the deletion is committed): removes what belongs to it.
    /// Failures are the extension's to log; the delete stands.
    func afterDelete(_ object: StoredObject, auth: AuthContext)
    /// The extension's cloud functions by name (`POST /functions/:name`).
    var functions: [String: ExtensionFunction] { get }
    /// Who may download which files; nil: every file is public, as in Parse.
    var fileAccess: (any FileAccess)? { get }
    /// Removes the extension's leftovers of saves that died with the process, older than `cutoff`
    /// (run by the uploads reaper at start and hourly).
    func sweepLeftovers(before cutoff: ParseDate)
    /// A provider confirmed `providerUserId`'s identity at login or link (`UserService`), with the
    /// `authData` the client sent; e.g. the wall syncs the user's friend list. Must not throw: a
    /// failure here doesn't fail the login.
    func identityConfirmed(provider: any IdentityProvider, authData: [String: JSON], providerUserId: String)
}

extension ObjectServiceExtension {
    public func writeRules(for className: String) -> ClassWriteRules? { nil }
    public func readScope(className: String, auth: AuthContext) throws(ParseError) -> Predicate? { nil }
    public func restrictedView(for className: String) -> RestrictedView? { nil }
    public func beforeSave(className: String, body: [String: JSON], auth: AuthContext,
                           original: StoredObject?) throws(ParseError) -> SaveHookOutcome? { nil }
    public func render(_ object: inout [String: JSON], className: String) {}
    public func renders(className: String) -> Bool { true }
    public func mayDelete(_ object: StoredObject, auth: AuthContext) throws(ParseError) -> Bool { false }
    public func afterDelete(_ object: StoredObject, auth: AuthContext) {}
    public var functions: [String: ExtensionFunction] { [:] }
    public var fileAccess: (any FileAccess)? { nil }
    public func sweepLeftovers(before cutoff: ParseDate) {}
    public func identityConfirmed(provider: any IdentityProvider, authData: [String: JSON], providerUserId: String) {}
}

extension ObjectService {
    /// The installed extension's cloud functions, bound to this service (for `ParseAPI`).
    public var functions: [String: CloudFunction] {
        var out: [String: CloudFunction] = [:]
        for (name, f) in installed?.functions ?? [:] { out[name] = bind(f) }
        return out
    }

    func bind(_ f: @escaping ExtensionFunction) -> CloudFunction {
        let bound: CloudFunction = { [self] params, auth throws(ParseError) in try f(params, auth, self) }
        return bound
    }

    /// Who may download files, by the installed extension (nil: all files are public).
    public var fileAccess: (any FileAccess)? { installed?.fileAccess }

    /// Runs the installed extension's leftovers sweep (for `UploadService.startReaper`'s `otherSweeps`).
    public func sweepLeftovers(before cutoff: ParseDate) { installed?.sweepLeftovers(before: cutoff) }

    /// Tells the installed extension that a provider confirmed an identity (see `ObjectServiceExtension.identityConfirmed`).
    public func identityConfirmed(provider: any IdentityProvider, authData: [String: JSON], providerUserId: String) {
        installed?.identityConfirmed(provider: provider, authData: authData, providerUserId: providerUserId)
    }
}
