package dev.readygate.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Reads framebuffer memory per GPU from the DCGM exporter's metrics endpoint ({@code DCGM_FI_DEV_FB_USED},
 * {@code _FREE}, {@code _RESERVED}). The exporter does not list processes, so its readings have no owners: it is the
 * source to use where nvidia-smi cannot run in the sidecar, or the fallback when it fails.
 *
 * <p>The request runs on the given scheduler, which must allow blocking; the body is read up to {@code maxBody}.
 */
final class DcgmExporterReader implements GpuMemorySource {

    private final URI url;
    private final List<String> gpuUuids;
    private final Duration timeout;
    private final int maxBodyBytes;
    private final HttpClient client;
    private final Clock clock;
    private final Scheduler scheduler;

    /**
     * @param url the exporter's metrics URL, e.g. {@code http://dcgm-exporter.gpu-operator:9400/metrics}
     * @param gpuUuids the GPUs to report; empty for all
     * @param timeout how long one scrape may take
     * @param maxBody the largest body read
     * @param client the HTTP client
     * @param clock when readings are taken
     * @param scheduler where the request runs: must allow blocking
     */
    public DcgmExporterReader(
            URI url,
            List<String> gpuUuids,
            Duration timeout,
            DataSize maxBody,
            HttpClient client,
            Clock clock,
            Scheduler scheduler) {
        this.url = url;
        this.gpuUuids = List.copyOf(gpuUuids);
        this.timeout = timeout;
        this.maxBodyBytes = Math.toIntExact(maxBody.toBytes());
        this.client = client;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    @Override
    public String name() {
        return "dcgm";
    }

    @Override
    public Mono<GpuReading> read() {
        return Mono.fromCallable(this::readNow).subscribeOn(scheduler);
    }

    private GpuReading readNow() {
        HttpRequest request = HttpRequest.newBuilder(url)
                .timeout(timeout)
                .header("Accept", "text/plain")
                .GET()
                .build();
        try {
            HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = response.body()) {
                if (response.statusCode() != 200) {
                    return new GpuReading.Failure(
                            GpuReading.Reason.HTTP_STATUS, url + " answered HTTP " + response.statusCode());
                }
                byte[] bytes = body.readNBytes(maxBodyBytes + 1);
                if (bytes.length > maxBodyBytes) {
                    return new GpuReading.Failure(
                            GpuReading.Reason.UNEXPECTED_OUTPUT, url + " sent more than " + maxBodyBytes + " bytes");
                }
                return select(DcgmExporterParser.parse(new String(bytes, StandardCharsets.UTF_8), clock.instant()));
            }
        } catch (HttpTimeoutException ex) {
            return new GpuReading.Failure(GpuReading.Reason.TIMED_OUT, url + " did not answer within " + timeout);
        } catch (ConnectException ex) {
            return new GpuReading.Failure(GpuReading.Reason.UNREACHABLE, "cannot connect to " + url);
        } catch (IOException ex) {
            return new GpuReading.Failure(
                    GpuReading.Reason.IO_ERROR, "reading " + url + ": " + NvidiaSmiParser.excerpt(ex.toString()));
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return new GpuReading.Failure(GpuReading.Reason.IO_ERROR, "interrupted while reading " + url);
        }
    }

    private GpuReading select(GpuReading reading) {
        return GpuReading.onlyGpus(reading, gpuUuids);
    }
}
