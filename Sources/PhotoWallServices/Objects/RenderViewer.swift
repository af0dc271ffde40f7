import PhotoWallCore
import PhotoWallStorage
import Synchronization

/// Which of an object's fields its class's field rules show a viewer (`ObjectService.wireObject`).
public enum FieldView: UInt8, Hashable, Sendable {
    /// No rule applies: the master key, or a class with no `FieldPolicy` and no `RestrictedView`.
    /// Every field but `_` columns.
    case unrestricted
    /// The object's owner (`FieldPolicy.isOwner`): all but the master-only fields.
    case owner
    /// Anyone else: neither master-only nor owner-only fields, and only the `RestrictedView`'s fields.
    case other
}

/// The reader a rendering (`ObjectService.render`) is for, as the rendering sees it: the only two
/// questions it asks about who reads, and where it reads `include` targets from.
///
/// `render` learns nothing else of the caller, so its output is a function of the objects, the
/// options, the targets and these answers. That is what lets LiveQuery render an event once per group
/// of viewers who answer alike (`RenderTrace`), with every rule still decided per viewer.
struct RenderViewer {
    let service: ObjectService
    let auth: AuthContext
    /// Where `include` targets come from; nil: the store, read for this rendering.
    let source: IncludeTargets?
    /// When set, every question asked and its answer, in order.
    var trace: RenderTrace?
    /// The viewer's read scopes by class, computed once per rendering (`ObjectService.includes`).
    var scopes: [String: Predicate?] = [:]

    init(service: ObjectService, auth: AuthContext, source: IncludeTargets? = nil, recording: Bool = false) {
        self.service = service; self.auth = auth; self.source = source
        trace = recording ? RenderTrace() : nil
    }

    /// `ObjectService.fieldView(_:auth:)`, recorded.
    mutating func fieldView(_ o: StoredObject) -> FieldView {
        let answer = service.fieldView(o, auth: auth)
        trace?.steps.append(RenderTrace.Step(question: .fieldView(o), answer: answer.rawValue))
        return answer
    }

    /// `ObjectService.includes(_:via:auth:scopes:)`, recorded.
    mutating func includes(_ o: StoredObject, via: String) throws(ParseError) -> Bool {
        let answer = try service.includes(o, via: via, auth: auth, scopes: &scopes)
        trace?.steps.append(RenderTrace.Step(question: .includes(o, via: via), answer: answer ? 1 : 0))
        return answer
    }

    /// The objects of `className` with these ids, unfiltered (the same for every viewer).
    func targets(className: String, ids: Set<String>) throws(ParseError) -> [StoredObject] {
        if let source { return try source.objects(className: className, ids: ids) }
        return try service.includeTargets(className: className, ids: ids)
    }
}

/// The questions a rendering asked its viewer (`RenderViewer`) and the answers, in order.
///
/// `render` is deterministic in its inputs, so another viewer who gives the same answers to these
/// same questions, asked in this order, would be asked nothing else and get the same rendering, byte
/// for byte (`holds(for:in:)`). The questions carry the objects they are about, so asking them again
/// reads nothing.
public struct RenderTrace: Sendable {
    enum Question: Sendable {
        case fieldView(StoredObject)
        case includes(StoredObject, via: String)
    }

    struct Step: Sendable {
        var question: Question
        var answer: UInt8
    }

    var steps: [Step] = []

    /// Whether `auth` answers every recorded question as recorded (asked of `service`, in order).
    /// - Throws: what `ObjectService.includes(_:via:auth:scopes:)` throws.
    public func holds(for auth: AuthContext, in service: ObjectService) throws(ParseError) -> Bool {
        var scopes: [String: Predicate?] = [:]
        for step in steps {
            let answer: UInt8
            switch step.question {
            case .fieldView(let o): answer = service.fieldView(o, auth: auth).rawValue
            case .includes(let o, let via): answer = try service.includes(o, via: via, auth: auth, scopes: &scopes) ? 1 : 0
            }
            if answer != step.answer { return false }
        }
        return true
    }
}

/// `include` targets read once and shared by many renderings of the same objects (one LiveQuery
/// event's viewers): the objects by class and id, whoever may read them. Each rendering still filters
/// them for its viewer (`ObjectService.includes(_:via:auth:scopes:)`). Lives as long as its event.
public final class IncludeTargets: Sendable {
    let service: ObjectService
    private let memo = Mutex<[String: [StoredObject]]>([:])

    init(service: ObjectService) { self.service = service }

    /// The objects of `className` with these ids (read from the store the first time they are asked for).
    func objects(className: String, ids: Set<String>) throws(ParseError) -> [StoredObject] {
        let key = className + "\u{0}" + ids.sorted().joined(separator: ",")
        if let known = memo.withLock({ $0[key] }) { return known }
        let found = try service.includeTargets(className: className, ids: ids)
        memo.withLock { $0[key] = found }
        return found
    }
}
