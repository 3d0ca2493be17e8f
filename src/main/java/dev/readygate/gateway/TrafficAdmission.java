package dev.readygate.gateway;

/**
 * The one place the gateway asks whether a request may go to the engine now, asked once per request before anything
 * is sent: {@link RulesAdmission}, by {@link AdmissionRules}. Holding requests through a short start (issue 27, item
 * 3) belongs here too.
 */
@FunctionalInterface
public interface TrafficAdmission {

    /** Whether the request may go to the engine now; cheap and non-blocking (it runs on the traffic event loop). */
    Admission admit();
}
