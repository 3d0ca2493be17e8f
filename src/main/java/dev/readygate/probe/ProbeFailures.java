package dev.readygate.probe;

import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMessages;
import dev.readygate.readiness.Reason;
import java.time.Instant;

/** Turns an engine call's failure into a failed probe report with a readiness reason. */
final class ProbeFailures {

    private ProbeFailures() {}

    static ProbeReport report(ProbeKind kind, EngineFailure failure, Instant at) {
        String detail = failure.detail();
        return switch (failure.kind()) {
            case REFUSED -> ProbeReport.failed(kind, at, Reason.ENGINE_DOWN, detail);
            case RESET -> ProbeReport.failed(kind, at, Reason.CONNECTION_RESET, detail);
            case TIMED_OUT -> ProbeReport.failed(kind, at, Reason.TIMED_OUT, detail);
            case STALLED -> ProbeReport.failed(kind, at, Reason.STALLED, detail);
            case LOADING -> ProbeReport.failed(kind, at, Reason.ENGINE_LOADING, detail);
            case HTTP_STATUS, NOT_SUPPORTED ->
                isContextLength(failure)
                        ? ProbeReport.failed(kind, at, Reason.PROBE_EXCEEDS_CONTEXT, detail)
                                .latch()
                        : ProbeReport.failed(kind, at, Reason.HTTP_STATUS, detail);
            case MALFORMED_BODY -> ProbeReport.failed(kind, at, Reason.MALFORMED_RESPONSE, detail);
            case TRUNCATED_STREAM -> ProbeReport.failed(kind, at, Reason.TRUNCATED_STREAM, detail);
            case OVERLONG_STREAM -> ProbeReport.failed(kind, at, Reason.OVERLONG_STREAM, detail);
            case BODY_TOO_LARGE -> ProbeReport.failed(kind, at, Reason.RESPONSE_TOO_LARGE, detail);
            case IO_ERROR -> ProbeReport.failed(kind, at, Reason.IO_ERROR, detail);
        };
    }

    /** An engine's 4xx for a request longer than its context (vLLM's 400, TGI's 422, ...). */
    private static boolean isContextLength(EngineFailure failure) {
        Integer status = failure.httpStatus();
        return status != null && status >= 400 && status < 500 && EngineMessages.contextLength(failure.detail());
    }
}
