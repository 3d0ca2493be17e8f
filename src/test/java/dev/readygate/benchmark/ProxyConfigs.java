package dev.readygate.benchmark;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * nginx and HAProxy as the streaming reverse proxies users already run in front of an engine, configured as such a user
 * would: responses unbuffered (server-sent events pass as they come), keep-alive to the engine, and each one's passive
 * health on (nginx {@code max_fails}, HAProxy {@code observe layer7}), so that the comparison with readygate's gateway
 * is with each at its best for LLM streams.
 */
final class ProxyConfigs {

    private ProxyConfigs() {}

    /**
     * nginx in the foreground, its files under {@code prefix}: one worker per core, no access log, buffering off both
     * ways, HTTP/1.1 keep-alive to the engine, passive health ({@code max_fails=3 fail_timeout=10s}: three failed
     * attempts take the engine out for 10 s; nginx counts connection errors and timeouts, and the statuses
     * {@code proxy_next_upstream} names, never an error inside a 200 stream). With several engines (replicas), requests
     * take turns, and a failed attempt is tried once more on the next engine ({@code proxy_next_upstream}).
     */
    static String nginx(String prefix, int listen, int... engines) {
        String servers = Arrays.stream(engines)
                .mapToObj(engine -> "        server 127.0.0.1:" + engine + " max_fails=3 fail_timeout=10s;")
                .collect(Collectors.joining("\n"));
        return String.format(Locale.ROOT, """
                daemon off;
                worker_processes auto;
                pid %1$s/nginx.pid;
                error_log %1$s/error.log warn;
                events {
                    worker_connections 4096;
                }
                http {
                    access_log off;
                    client_body_temp_path %1$s/body;
                    proxy_temp_path %1$s/proxy;
                    fastcgi_temp_path %1$s/fastcgi;
                    uwsgi_temp_path %1$s/uwsgi;
                    scgi_temp_path %1$s/scgi;
                    upstream engine {
                %3$s
                        keepalive 128;
                    }
                    server {
                        listen 127.0.0.1:%2$d;
                        client_max_body_size 4m;
                        location / {
                            proxy_pass http://engine;
                            proxy_http_version 1.1;
                            proxy_set_header Connection "";
                            proxy_buffering off;
                            proxy_request_buffering off;
                            proxy_cache off;
                            proxy_connect_timeout 5s;
                            proxy_read_timeout 60s;
                            proxy_next_upstream error timeout http_502 http_503 http_504;
                        }
                    }
                }
                """, prefix, listen, servers);
    }

    /**
     * HAProxy in the foreground: one thread per core, HTTP mode with keep-alive on both sides, each event sent as it
     * comes ({@code option http-no-delay}: without it HAProxy lets the kernel merge small writes, and a stream of 20 ms
     * tokens arrived in bursts about 220 ms apart; it buffers a request only with {@code option http-buffer-request}),
     * and passive health on
     * ({@code observe layer7 error-limit 3 on-error mark-down}: three 5xx answers take the engine out; statuses only).
     * With several engines (replicas), requests take turns ({@code balance roundrobin}), and one whose connection failed
     * is tried again on another ({@code option redispatch}; HAProxy's default {@code retries 3}).
     */
    static String haproxy(int listen, int threads, int... engines) {
        StringBuilder servers = new StringBuilder();
        for (int i = 0; i < engines.length; i++) {
            servers.append(String.format(
                    Locale.ROOT,
                    "    server engine%d 127.0.0.1:%d check inter 2s observe layer7 error-limit 3 on-error mark-down%n",
                    i,
                    engines[i]));
        }
        return String.format(
                Locale.ROOT, """
                global
                    nbthread %3$d
                    maxconn 4096
                defaults
                    mode http
                    option http-keep-alive
                    option http-no-delay
                %4$s    timeout connect 5s
                    timeout client 60s
                    timeout server 60s
                    timeout http-keep-alive 60s
                frontend traffic
                    bind 127.0.0.1:%1$d
                    default_backend engine
                backend engine
                    balance roundrobin
                    http-reuse always
                %2$s""", listen, servers, threads, engines.length > 1 ? "    option redispatch\n" : "");
    }
}
