import { describeWithMedic, shard } from './scenario-play.js';

// Shard 4 of 4 of the scenarios without a spotlight of their own (see scenario-play.ts).
describeWithMedic(shard(4, 4));
