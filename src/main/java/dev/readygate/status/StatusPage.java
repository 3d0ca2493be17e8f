package dev.readygate.status;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.function.Predicate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /status} for people: when the client asks for {@code text/html} by name and prefers it to JSON (browsers
 * do), one self-contained page ({@value #PAGE}) that the server renders from the {@code /status} document
 * ({@link StatusPageRenderer}: the verdict, the current start, the probes, the engine and the restart history read
 * without script) and whose script draws the rest at once and polls the JSON {@code /status} every two seconds. Tools (no {@code Accept}, <code>*&#47;*</code>, {@code application/json}) do not match this route and get
 * {@link StatusController}'s JSON; functional routes are consulted before annotated controllers.
 */
@Configuration(proxyBeanMethods = false)
class StatusPage {

    static final String PAGE = "status/status.html";

    static final MediaType HTML = new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8);

    @Bean
    RouterFunction<ServerResponse> statusPageRoute(StatusController status, JsonMapper json) {
        // Read once at startup, off the event loop.
        String html = read();
        String policy = contentSecurityPolicy(html);
        StatusPageRenderer renderer = new StatusPageRenderer(html, json);
        return RouterFunctions.route(
                RequestPredicates.GET("/status").and(StatusPage::prefersHtml),
                request -> status.shared()
                        // Parsed and rendered off the event loop: a shared body may come straight from memory.
                        .publishOn(Schedulers.boundedElastic())
                        .map(document -> renderer.render(json.readTree(document)))
                        .flatMap(page -> ServerResponse.ok()
                                .contentType(HTML)
                                .cacheControl(CacheControl.noCache())
                                .varyBy(HttpHeaders.ACCEPT)
                                .header("Content-Security-Policy", policy)
                                .header("X-Content-Type-Options", "nosniff")
                                .header("Referrer-Policy", "no-referrer")
                                .bodyValue(page)));
    }

    static boolean prefersHtml(ServerRequest request) {
        try {
            return prefersHtml(request.headers().accept());
        } catch (InvalidMediaTypeException ex) {
            return false; // the JSON controller answers (and rejects) it
        }
    }

    /**
     * Whether {@code accept} names {@code text/html} and ranks it above {@code application/json} and not below a
     * wildcard that would also take JSON. A wildcard never asks for the page: <code>*&#47;*</code> is what tools send,
     * and they want JSON; on a tie the named JSON wins, the named HTML wins over a wildcard.
     */
    static boolean prefersHtml(List<MediaType> accept) {
        double html = quality(accept, type -> type.equalsTypeAndSubtype(MediaType.TEXT_HTML));
        double json = quality(accept, type -> type.equalsTypeAndSubtype(MediaType.APPLICATION_JSON));
        double wildcard =
                quality(accept, type -> type.isWildcardSubtype() && type.includes(MediaType.APPLICATION_JSON));
        return html > 0 && html > json && html >= wildcard;
    }

    private static double quality(List<MediaType> accept, Predicate<MediaType> matching) {
        return accept.stream()
                .filter(matching)
                .mapToDouble(MediaType::getQualityValue)
                .max()
                .orElse(0);
    }

    private static String read() {
        try {
            return new ClassPathResource(PAGE).getContentAsString(StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot read " + PAGE, ex);
        }
    }

    /**
     * Nothing but the page itself and its fetches to this origin: the page's one inline script is allowed by its hash,
     * so no other script can run even if the page had a bug that put engine text into markup.
     */
    static String contentSecurityPolicy(String html) {
        return "default-src 'none'; script-src '" + scriptHash(html) + "'; style-src 'unsafe-inline'; "
                + "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    }

    static String scriptHash(String html) {
        // The one script without attributes; the rendered page's JSON data block is not a script that runs.
        int open = html.indexOf("<script>");
        int close = html.indexOf("</script>", open + 1);
        if (open < 0 || close < open || html.indexOf("<script", open + 1) >= 0) {
            throw new IllegalStateException(
                    PAGE + " must hold exactly one inline <script> (its hash goes into the CSP)");
        }
        String script = html.substring(open + "<script>".length(), close);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(script.getBytes(StandardCharsets.UTF_8));
            return "sha256-" + Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }
}
