package dev.readygate.simulator;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The simulator's admin API on its own port: restart the engine along a path, switch faults, crash or stop it, drive
 * the preload daemon, rotate the log, and read the state.
 */
final class AdminApi {

    private final EngineSimulator simulator;

    private AdminApi(EngineSimulator simulator) {
        this.simulator = simulator;
    }

    static Mono<DisposableServer> bind(EngineSimulator simulator) {
        AdminApi api = new AdminApi(simulator);
        SimulatorProperties properties = simulator.properties();
        return HttpServer.create()
                .runOn(simulator.loops())
                .host(properties.host())
                .port(properties.adminPort())
                .route(routes -> routes.get("/admin/state", (req, res) -> api.state(res, HttpResponseStatus.OK))
                        .post(
                                "/admin/restart",
                                api.command(query -> simulator.restart(StartupPath.fromValue(required(query, "path")))))
                        .post(
                                "/admin/fault",
                                api.command(query -> Mono.fromRunnable(() -> simulator.setFault(
                                        Fault.fromValue(required(query, "name")),
                                        !"false".equals(optional(query, "enabled")),
                                        Scenario.scope(optional(query, "scope"))))))
                        .post("/admin/faults/clear", api.command(query -> Mono.fromRunnable(simulator.faults()::clear)))
                        .post(
                                "/admin/crash",
                                api.command(query -> simulator.engine().crash("simulated crash")))
                        .post(
                                "/admin/stop",
                                api.command(query -> simulator.engine().stop()))
                        .post("/admin/daemon", api.command(query -> simulator.apply(daemon(query))))
                        .post("/admin/log", api.command(query -> simulator.apply(log(query))))
                        .post(
                                "/admin/switch",
                                api.command(
                                        query -> simulator.apply(Scenario.switchRevision(optional(query, "revision")))))
                        .post(
                                "/admin/traffic",
                                api.command(query -> simulator.apply(Scenario.traffic(optional(query, "clients")))))
                        .get(
                                "/admin/dcgm/metrics",
                                (req, res) -> res.header("Content-Type", "text/plain; version=0.0.4")
                                        .sendString(Mono.fromCallable(simulator::dcgmMetrics)))
                        .route(
                                request -> true,
                                (req, res) -> api.error(
                                        res,
                                        HttpResponseStatus.NOT_FOUND,
                                        "no such admin endpoint: " + req.method() + " " + req.path())))
                .bind()
                .cast(DisposableServer.class);
    }

    private static Scenario.Action daemon(Map<String, List<String>> query) {
        return Scenario.daemon(required(query, "action"), optional(query, "checkpoint"), optional(query, "layout"));
    }

    private static Scenario.Action log(Map<String, List<String>> query) {
        return Scenario.log(required(query, "action"));
    }

    private BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> command(
            Function<Map<String, List<String>>, Mono<Void>> action) {
        return (request, response) -> {
            Map<String, List<String>> query = new QueryStringDecoder(request.uri()).parameters();
            Mono<Void> run;
            try {
                run = action.apply(query);
            } catch (IllegalArgumentException ex) {
                return error(response, HttpResponseStatus.BAD_REQUEST, ex.getMessage());
            }
            return run.then(Mono.defer(() -> Mono.from(state(response, HttpResponseStatus.OK))))
                    .onErrorResume(
                            IllegalArgumentException.class,
                            ex -> Mono.from(error(response, HttpResponseStatus.BAD_REQUEST, ex.getMessage())));
        };
    }

    private Publisher<Void> state(HttpServerResponse response, HttpResponseStatus status) {
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .sendString(Mono.fromSupplier(() -> simulator.json().writeValueAsString(simulator.state())));
    }

    private Publisher<Void> error(HttpServerResponse response, HttpResponseStatus status, String message) {
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .sendString(Mono.fromSupplier(() -> simulator.json().writeValueAsString(Map.of("error", message))));
    }

    private static String required(Map<String, List<String>> query, String name) {
        String value = optional(query, name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("query parameter '" + name + "' is required");
        }
        return value;
    }

    private static @Nullable String optional(Map<String, List<String>> query, String name) {
        List<String> values = query.get(name);
        return values == null || values.isEmpty() ? null : values.getFirst();
    }
}
