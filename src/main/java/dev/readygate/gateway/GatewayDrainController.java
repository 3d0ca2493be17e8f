package dev.readygate.gateway;

import dev.readygate.config.ReadygateProperties;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * An engine stop the operator announces, on readygate's own port: {@code POST /gateway/drain} before a planned restart
 * of the engine (a new release, a preload-hit restart) stops sending new requests to it (they wait for the next start
 * with {@code hold} on, are refused 503 otherwise) and answers once the requests in flight have ended: 200, or 504 when
 * some still run after {@code readygate.gateway.max-wait}. The announcement lapses when the next start begins, or
 * after {@code max-wait} without one; {@code DELETE /gateway/drain} withdraws it. Only from the pod itself (a loopback
 * address: the engine container's restart script): anyone else reaching readygate's port could pause the traffic, so
 * they get 403. 404 while gateway mode is off.
 */
@RestController
class GatewayDrainController {

    static final String PATH = "/gateway/drain";

    private final RulesAdmission admission;
    private final WorkInFlight work;
    private final ReadygateProperties.Gateway settings;
    private final Scheduler timer;

    GatewayDrainController(
            RulesAdmission admission,
            WorkInFlight work,
            ReadygateProperties properties,
            @Qualifier("timerScheduler") Scheduler timer) {
        this.admission = admission;
        this.work = work;
        this.settings = properties.gateway();
        this.timer = timer;
    }

    @PostMapping(path = PATH, produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<ResponseEntity<Map<String, Object>>> announce(ServerHttpRequest request) {
        ResponseEntity<Map<String, Object>> refused = refused(request);
        if (refused != null) {
            return Mono.just(refused);
        }
        RulesAdmission.Announced announced = admission.announceStop();
        // Drained once every request admitted before the announcement has ended (one admitted an instant before it may
        // not have reached the engine yet) and every answer's last byte is written to its client.
        Mono<Boolean> drained = admission
                .idle()
                .then(work.idle())
                .thenReturn(true)
                .timeout(settings.maxWait(), Mono.just(false), timer);
        return drained.map(done -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("announced", true);
            body.put("startId", announced.startId());
            body.put("lapsesAt", announced.until().toString());
            body.put("drained", done);
            body.put("inFlight", Math.max(work.inFlight(), admission.inFlight()));
            body.put("waiting", admission.queued());
            return ResponseEntity.status(done ? HttpStatus.OK : HttpStatus.GATEWAY_TIMEOUT)
                    .body(body);
        });
    }

    @DeleteMapping(path = PATH, produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<Map<String, Object>> withdraw(ServerHttpRequest request) {
        ResponseEntity<Map<String, Object>> refused = refused(request);
        if (refused != null) {
            return refused;
        }
        admission.withdrawAnnouncement();
        return ResponseEntity.ok(Map.of("announced", false));
    }

    /** 404 with gateway mode off, 403 from anywhere but the pod itself; null when the request may go on. */
    private @Nullable ResponseEntity<Map<String, Object>> refused(ServerHttpRequest request) {
        if (!settings.enabled()) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "gateway mode is off"));
        }
        InetSocketAddress remote = request.getRemoteAddress();
        if (remote == null
                || remote.getAddress() == null
                || !remote.getAddress().isLoopbackAddress()) {
            return ResponseEntity.status(HttpStatus.FORBIDDEN)
                    .body(Map.of("error", "an engine stop is announced from the pod itself (127.0.0.1) only"));
        }
        return null;
    }
}
