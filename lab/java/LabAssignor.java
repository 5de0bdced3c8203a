// The lab's assignors: Kafka's own RangeAssignor and CooperativeStickyAssignor under their own
// names ("range", "cooperative-sticky": the wire is unchanged), which also remember the member
// list a leader assigned so LabMember can log it with the generation.

import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;

public class LabAssignor {
    static final Map<String, List<String>> lastMembers = new HashMap<>();

    static synchronized List<String> takeMembers(String clientId) { return lastMembers.remove(clientId); }

    static synchronized void remember(String clientId, ConsumerPartitionAssignor.GroupSubscription gs) {
        List<String> ids = new ArrayList<>(gs.groupSubscription().keySet());
        Collections.sort(ids);
        lastMembers.put(clientId, ids);
    }

    public static class Range extends RangeAssignor implements Configurable {
        String clientId = "";
        public void configure(Map<String, ?> configs) { clientId = String.valueOf(configs.get("client.id")); }
        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription gs) {
            remember(clientId, gs);
            return super.assign(metadata, gs);
        }
    }

    public static class CooperativeSticky extends CooperativeStickyAssignor implements Configurable {
        String clientId = "";
        public void configure(Map<String, ?> configs) { clientId = String.valueOf(configs.get("client.id")); }
        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription gs) {
            remember(clientId, gs);
            return super.assign(metadata, gs);
        }
    }
}
