# readygate's image: the sidecar, or with `simulate` as first argument the vLLM simulator.
#
#   ./mvnw package -DskipTests                  # makes target/readygate.jar; Docker needs no Maven
#   docker build -t readygate .                 # --build-arg BASE_IMAGE=... for another Java 25 runtime
#   docker run --read-only --tmpfs /tmp --network host readygate --readygate.engine.base-url=http://127.0.0.1:8000
#
# It runs as UID 10001, writes only to /tmp and /var/lib/readygate (the state directory: mount a volume there to keep
# the restart history and canary baselines), and reads configuration from /app/config/application.yaml if mounted.
# JVM flags: JDK_JAVA_OPTIONS (replace it whole to change them). The runtime stage needs nothing but the base image.
# Every instruction costs seconds on the vfs storage driver of the project's CI: keep their number down.

ARG BASE_IMAGE=eclipse-temurin:25-jre

FROM ${BASE_IMAGE} AS extract
# Marks what this stage leaves behind (Docker's classic builder keeps it as untagged build cache) for clean-up.
LABEL dev.readygate.build-stage=extract
COPY target/readygate.jar /build/readygate.jar
# Spring Boot's layers, least often changed first. Without --launcher: the application is a plain jar whose manifest
# puts lib/*.jar on the class path, the layout the JVM's AOT cache can hold application classes for (Boot's own
# launcher loads them through its own class loader, which the cache skips: 2.0 s to a refreshed context instead of
# 1.5 s, measured on 2 cores).
RUN java -Djarmode=tools -jar /build/readygate.jar extract --layers --destination /build/extracted

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="readygate" \
      org.opencontainers.image.description="Verified-readiness sidecar for vLLM inference engines"
RUN groupadd --system --gid 10001 readygate \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/readygate --no-create-home \
        --shell /usr/sbin/nologin readygate \
    && mkdir -p /var/lib/readygate \
    && chown 10001:10001 /var/lib/readygate
WORKDIR /app
# Two layers: the released dependencies, then the application with any snapshot dependencies (they change as often).
# The spring-boot-loader layer is empty without the launcher. An empty layer of its own trips Docker's classic
# builder, which then fails on the next COPY ("failed to get layer ...: layer does not exist").
COPY --from=extract /build/extracted/dependencies/ ./
COPY --from=extract /build/extracted/snapshot-dependencies/ /build/extracted/application/ ./
# JVM flags for a sidecar (docs/benchmarks.md, "Footprint"; the harness measures exactly these, FootprintStage.IMAGE):
# Serial GC and C1 only; a heap from 16 MiB up to 128 MiB (the live set is about 15 to 25 MiB) that gives memory back
# after a collection; compact object headers; smaller thread stacks, code cache and direct memory; no full collection
# to clean the code cache (C1's code settles at about 13 MiB; each such collection stopped readygate 32 to 58 ms, the
# largest /readyz delays measured: docs/benchmarks.md; -XX:-UseCodeCacheFlushing alone left one at start, 47 ms, which
# -XX:SweeperThreshold=100 stops); no hsperfdata file;
# the C heap trimmed every 5 s (malloc_trim gives freed native memory back); an OutOfMemoryError ends the process, so
# the kubelet restarts it rather than leaving a half-working sidecar; Netty's buffers allocated and freed, no pool kept
# (about 4 MiB less idle RSS; gateway mode's traffic keeps a pool of its own); and
# Spring's AOT-processed bean definitions (made by the build). Replace JDK_JAVA_OPTIONS whole to change them; the AOT
# cache below is skipped (with a warning) when the GC or the object headers differ from these. In gateway mode (in the
# traffic path) the chart replaces them with the same flags but C2 as well and a 64 MiB code cache
# (gateway.jdkJavaOptions), which keep the cache.
ENV JDK_JAVA_OPTIONS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xms16m -Xmx128m -XX:MinHeapFreeRatio=5 -XX:MaxHeapFreeRatio=20 -XX:+UseCompactObjectHeaders -Xss512k -XX:ReservedCodeCacheSize=32m -XX:-UseCodeCacheFlushing -XX:SweeperThreshold=100 -XX:MaxDirectMemorySize=64m -XX:-UsePerfData -XX:TrimNativeHeapInterval=5000 -XX:+ExitOnOutOfMemoryError -Dio.netty.allocator.type=unpooled -Dspring.aot.enabled=true" \
    READYGATE_STATE_DIR=/var/lib/readygate
# AOT cache (JEP 483/514): one training run with the flags above records the classes loaded and linked; later starts
# map them. The run (`aot-training`) starts the sidecar with its web server, lets its probe loop fail against no engine
# for 2 s, asks /livez and /readyz as the kubelet does, and exits. It must be made by this image's JVM with this class
# path, hence here and not in the first stage.
RUN java -XX:AOTCacheOutput=/app/readygate.aot -jar readygate.jar aot-training \
        --readygate.engine.base-url=http://127.0.0.1:1 --readygate.state-dir=/tmp/aot-training --server.port=0 \
        >/tmp/aot-training.log 2>&1 \
    || { cat /tmp/aot-training.log; exit 1; } \
    ; rm -rf /tmp/aot-training /tmp/aot-training.log
USER 10001:10001
VOLUME ["/var/lib/readygate"]
EXPOSE 8090
ENTRYPOINT ["java", "-XX:AOTCache=/app/readygate.aot", "-jar", "/app/readygate.jar"]
