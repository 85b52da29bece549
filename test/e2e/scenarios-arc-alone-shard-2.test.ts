import { baselineShard, describeArcAlone } from './scenario-play.js';

// Shard 2 of 2 of every scenario played by ARC alone (see scenario-play.ts).
describeArcAlone(baselineShard(2, 2));
