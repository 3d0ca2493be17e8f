package dev.readygate.engine;

/**
 * Carries an already-classified {@link EngineFailure} through a Reactor pipeline to the edge of
 * {@link WebClientEngineClient}, where it becomes an {@link EngineCall.Failure}. Never leaves the package.
 */
final class EngineCallException extends RuntimeException {

    private final EngineFailure failure;

    EngineCallException(EngineFailure failure) {
        // No stack trace: these are expected outcomes, and the detail says all there is to say.
        super(failure.kind().reason() + ": " + failure.detail(), null, false, false);
        this.failure = failure;
    }

    static EngineCallException of(EngineFailure.Kind kind, String detail) {
        return new EngineCallException(EngineFailure.of(kind, detail));
    }

    EngineFailure failure() {
        return failure;
    }
}
