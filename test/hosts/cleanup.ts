/** Removes what a run of the hosts test left (namespaces, bridge, /etc/netns, processes). */
import { cleanupHosts } from './netns.ts';

cleanupHosts();
