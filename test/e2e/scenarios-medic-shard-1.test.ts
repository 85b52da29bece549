import { describeWithMedic, shard } from './scenario-play.js';

// Shard 1 of 4 of the scenarios without a spotlight of their own (see scenario-play.ts).
describeWithMedic(shard(1, 4));
