def s = DFNF ;
  try(parallel @ function @ function @ outermost(appliedMap)) ;;
  try(tile(32, 2) @ outermost(mapNest(2))) ;;
  try(storeInMemory(appliedMap, lowerToC) @ outermost(appliedMap)) ;;
  try(fuseReduceMap @ outermost(appliedReduce)) ;;
  lowerToC
