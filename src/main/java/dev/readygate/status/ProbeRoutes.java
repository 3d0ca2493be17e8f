package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.gateway.GatewayMode;
import dev.readygate.readiness.EngineStateMachine;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

/**
 * The kubelet's probes ({@code GET} and {@code HEAD} of {@code /readyz}, {@code /livez} and, for a pod whose
 * readiness is gateway mode's traffic port, {@code /readyz/gateway}) answered by Reactor Netty
 * itself, as routes ahead of Spring's web stack on readygate's server: no exchange, no filter, no observation, no
 * health aggregation, only the bytes {@link ProbeAnswers} keeps, written on the event loop that read the request. A
 * probe so never waits behind Spring's work for other requests on its loop, and costs no allocation burst to the
 * collector. Everything else, Actuator's own {@code /actuator/health/readiness} and {@code /actuator/health/liveness}
 * among it, takes the usual way.
 */
@Configuration(proxyBeanMethods = false)
class ProbeRoutes {

    static final String READYZ = "/readyz";
    static final String LIVEZ = "/livez";
    static final String READYZ_GATEWAY = "/readyz/gateway";

    /** Actuator's own media type, what it answers unless the client asks for plain JSON. */
    static final String ACTUATOR_JSON = "application/vnd.spring-boot.actuator.v3+json";

    @Bean
    ProbeAnswers probeAnswers(EngineStateMachine machine, ApplicationAvailability availability, JsonMapper json) {
        return new ProbeAnswers(
                machine::current, availability::getReadinessState, availability::getLivenessState, json);
    }

    @Bean
    WebServerFactoryCustomizer<NettyReactiveWebServerFactory> probeRoutesCustomizer(
            ProbeAnswers answers, ReadygateProperties properties, GatewayMode gateway) {
        boolean gatewayEnabled = properties.gateway().enabled();
        return factory -> factory.addRouteProviders(routes -> routes.route(
                        request -> probe(request, READYZ),
                        (request, response) -> answer(request, response, answers.readiness()))
                .route(
                        request -> probe(request, LIVEZ),
                        (request, response) -> answer(request, response, answers.liveness()))
                .route(
                        request -> probe(request, READYZ_GATEWAY),
                        (request, response) -> answer(
                                request,
                                response,
                                ProbeAnswers.gateway(
                                        gatewayEnabled, gateway.takesTraffic(), gateway.engineVerifiedOnce()))));
    }

    private static boolean probe(HttpServerRequest request, String path) {
        HttpMethod method = request.method();
        return (method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD))
                && request.fullPath().equals(path);
    }

    private static Publisher<Void> answer(
            HttpServerRequest request, HttpServerResponse response, ProbeAnswers.Answer answer) {
        response.status(answer.status())
                .header(
                        HttpHeaderNames.CONTENT_TYPE,
                        contentType(request.requestHeaders().get(HttpHeaderNames.ACCEPT)))
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(answer.json().length));
        if (request.method().equals(HttpMethod.HEAD)) {
            return response.send();
        }
        return response.sendByteArray(Mono.just(answer.json()));
    }

    /** As Actuator chooses: its own type, unless the client accepts plain JSON and not it. */
    static String contentType(@Nullable String accept) {
        if (accept != null && accept.contains("application/json") && !accept.contains("actuator")) {
            return "application/json";
        }
        return ACTUATOR_JSON;
    }
}
