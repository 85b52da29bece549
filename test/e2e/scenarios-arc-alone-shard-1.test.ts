import { baselineShard, describeArcAlone } from './scenario-play.js';

// Shard 1 of 2 of every scenario played by ARC alone (see scenario-play.ts).
describeArcAlone(baselineShard(1, 2));
