package dev.readygate.gateway;

/**
 * The one place the gateway asks whether a request may go to the engine now, asked once per request before anything
 * is sent. The first slice answers from the engine's state alone ({@link EngineStateAdmission}); holding requests
 * through a short start and a {@code Retry-After} from the start's path (issue 27, item 3) belong here.
 */
@FunctionalInterface
public interface TrafficAdmission {

    /** Whether the request may go to the engine now; cheap and non-blocking (it runs on the traffic event loop). */
    Admission admit();
}
