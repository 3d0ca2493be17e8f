package dev.readygate.status;

import dev.readygate.evidence.EvidenceSources;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.RestartExport;
import dev.readygate.restart.RestartHistory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /status}: everything an operator needs at 3 a.m. in one JSON document ({@link StatusDocument}, built
 * section by section): is the engine ready, why not and since when, the last heavy probes with their measurements (the
 * canary's expected and actual answer), which vLLM endpoints the engine has, and the configuration in effect. Read from
 * memory; never triggers a probe. Shows no prompt, completion (beyond the canary's few tokens) or key. This controller
 * only routes and serializes: the document, and the restart history's exports ({@link RestartExport}).
 */
@RestController
class StatusController {

    /** The comparison of the whole restart history, as CSV. */
    static final String COMPARISON_CSV = "/status/comparison.csv";

    static final String RESTARTS_JSON = "/status/restarts.json";
    static final String RESTARTS_CSV = "/status/restarts.csv";

    private static final MediaType CSV = MediaType.parseMediaType("text/csv");

    private final EngineStateMachine machine;
    private final StatusDocument document;
    private final RestartExport restartExport;
    private final EvidenceSources evidenceSources;
    private final Clock clock;
    private final JsonMapper json;
    private final CoalescedStatus coalesced;

    public StatusController(
            EngineStateMachine machine,
            StatusDocument document,
            RestartHistory restartHistory,
            EvidenceSources evidenceSources,
            Clock clock,
            JsonMapper json) {
        this.machine = machine;
        this.document = document;
        this.restartExport = new RestartExport(restartHistory, Schedulers.boundedElastic());
        this.evidenceSources = evidenceSources;
        this.clock = clock;
        this.json = json;
        this.coalesced = new CoalescedStatus(machine::current, this::render, clock);
    }

    /**
     * The JSON document; {@link StatusPage} answers browsers on the same path, hence {@code Vary: Accept}. Polls share
     * one rendering ({@link CoalescedStatus}): {@code Age} says how long ago the body was rendered (its {@code now}),
     * and {@code Cache-Control: max-age} how long it is answered again.
     */
    @GetMapping(path = "/status", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<ResponseEntity<byte[]>> status() {
        return coalesced
                .body()
                .map(body -> ResponseEntity.ok()
                        .contentType(MediaType.APPLICATION_JSON)
                        .varyBy(HttpHeaders.ACCEPT)
                        .cacheControl(CacheControl.maxAge(CoalescedStatus.FRESH_FOR))
                        .header(
                                HttpHeaders.AGE,
                                String.valueOf(body.age(clock.instant()).toSeconds()))
                        .body(body.json()));
    }

    /**
     * The JSON document of {@code /status}, from the rendering the polls share ({@link CoalescedStatus}), which the page
     * ({@link StatusPage}) renders too: a browser's page costs no rendering of its own.
     */
    Mono<byte[]> shared() {
        return coalesced.body().map(CoalescedStatus.Body::json);
    }

    /** A new rendering of the JSON document, shared by the polls that join it ({@link CoalescedStatus}). */
    private Mono<CoalescedStatus.Body> render() {
        return reading().map(reading -> {
            EngineState state = machine.current();
            Instant at = clock.instant();
            return new CoalescedStatus.Body(json.writeValueAsBytes(document.of(reading, state, at)), at, state);
        });
    }

    /**
     * The daemon and snapshot directory, read now (asynchronously); everything else is in memory. The document is
     * then built and serialized off the event loop, where the probes are answered (at most
     * readygate.server.max-heavy-requests at once).
     */
    private Mono<EvidenceSources.Reading> reading() {
        return evidenceSources
                .read(Instant.EPOCH)
                .onErrorReturn(EvidenceSources.Reading.none())
                .publishOn(Schedulers.boundedElastic());
    }

    /**
     * The restart history (every kept file) as a JSON array, streamed record by record, for comparing runs.
     * {@code since} (an instant, or the id of the last record already read) and {@code limit} pick the records; a
     * {@code Link: <...>; rel="next"} header gives the next page when {@code limit} left some out.
     */
    @GetMapping(path = RESTARTS_JSON, produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<ResponseEntity<Flux<DataBuffer>>> restartsJson(
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable String limit) {
        return export(RestartExport.Format.JSON, RESTARTS_JSON, MediaType.APPLICATION_JSON, since, limit);
    }

    /** The restart history as CSV, one row per engine start, streamed; {@code since} and {@code limit} as for JSON. */
    @GetMapping(path = RESTARTS_CSV, produces = "text/csv")
    public Mono<ResponseEntity<Flux<DataBuffer>>> restartsCsv(
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable String limit) {
        return export(RestartExport.Format.CSV, RESTARTS_CSV, CSV, since, limit);
    }

    private Mono<ResponseEntity<Flux<DataBuffer>>> export(
            RestartExport.Format format, String path, MediaType type, @Nullable String since, @Nullable String limit) {
        RestartExport.Query query;
        try {
            query = RestartExport.Query.of(since, limit);
        } catch (IllegalArgumentException ex) {
            return Mono.just(badRequest(ex.getMessage()));
        }
        return restartExport
                .export(format, query)
                .map(streamed -> {
                    ResponseEntity.BodyBuilder response = ResponseEntity.ok()
                            .contentType(type)
                            .header("X-Readygate-Records", String.valueOf(streamed.records()));
                    if (streamed.fromMemory() > 0) {
                        // The state directory refused their writes: the body has them, the history's files do not.
                        response.header("X-Readygate-Records-Not-Written", String.valueOf(streamed.fromMemory()));
                    }
                    if (streamed.continueAfter() != null) {
                        response.header(
                                HttpHeaders.LINK,
                                "<" + path + "?since=" + streamed.continueAfter() + "&limit=" + query.limit()
                                        + ">; rel=\"next\"");
                    }
                    return response.body(streamed.body());
                })
                .onErrorResume(
                        RestartExport.UnknownRecordException.class, ex -> Mono.just(badRequest(ex.getMessage())));
    }

    private static ResponseEntity<Flux<DataBuffer>> badRequest(String message) {
        return ResponseEntity.badRequest()
                .contentType(MediaType.TEXT_PLAIN)
                .body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(
                        (message + "\n").getBytes(StandardCharsets.UTF_8))));
    }

    /**
     * The comparison of the restart history (every kept file) as CSV, one row per version, revision, configuration,
     * path and recovery kind: the records are read one by one and folded in (only the figures are held), then the rows
     * are streamed. {@code since} and {@code limit} pick the records as for the exports.
     */
    @GetMapping(path = COMPARISON_CSV, produces = "text/csv")
    public Mono<ResponseEntity<Flux<DataBuffer>>> comparisonCsv(
            @RequestParam(required = false) @Nullable String since,
            @RequestParam(required = false) @Nullable String limit) {
        RestartExport.Query query;
        try {
            query = RestartExport.Query.of(since, limit);
        } catch (IllegalArgumentException ex) {
            return Mono.just(badRequest(ex.getMessage()));
        }
        return restartExport
                .comparison(query)
                .map(comparison -> ResponseEntity.ok()
                        .contentType(CSV)
                        .body(Flux.fromIterable(comparison.csvLines())
                                .<DataBuffer>map(line -> DefaultDataBufferFactory.sharedInstance.wrap(
                                        line.getBytes(StandardCharsets.UTF_8)))))
                .onErrorResume(
                        RestartExport.UnknownRecordException.class, ex -> Mono.just(badRequest(ex.getMessage())));
    }
}
