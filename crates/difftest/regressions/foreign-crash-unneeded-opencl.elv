def s = DFNF ;
  try(fuseReduceMap @ outermost(appliedReduce)) ;;
  lowerToC
